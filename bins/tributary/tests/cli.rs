//! API keys and connections through the CLI.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use std::io::Write as _;
use std::process::Command;
use tributary_storage::testing::TestDatabase;

/// Runs `tributary` on `database_url`: (success, stdout, stderr).
fn tributary(database_url: &str, args: &[&str]) -> (bool, String, String) {
    tributary_with(database_url, &[], args)
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

#[test]
fn connecting_the_same_bank_twice_says_so() {
    let database = TestDatabase::sqlite();
    let url = database.url();
    assert!(tributary(&url, &["users", "create", "twice@example.com"]).0);
    let (first, out, err) = tributary(&url, &["connect", "sandbox", "--user", "twice@example.com"]);
    assert!(first, "{out}{err}");
    assert!(!out.contains("already has a connection"), "{out}");
    let (second, out, err) =
        tributary(&url, &["connect", "sandbox", "--user", "twice@example.com"]);
    assert!(second, "{out}{err}");
    assert!(
        out.contains("already has a connection to") && out.contains("(connection 1)"),
        "{out}"
    );
    // Disconnecting the second stops its syncs and keeps its data.
    let (done, out, err) = tributary(&url, &["connections", "disconnect", "2"]);
    assert!(done, "{out}{err}");
    assert!(
        out.contains("Connection 2") && out.contains("is disconnected"),
        "{out}"
    );
    let (synced, out, err) = tributary(&url, &["sync", "--connection", "2"]);
    assert!(!synced, "{out}");
    assert!(err.contains("disconnected"), "{err}");
    let (listed, out, _) = tributary(&url, &["connections", "list"]);
    assert!(listed && out.contains("DISCONNECTED"), "{out}");
    let (missing, _, err) = tributary(&url, &["connections", "disconnect", "99"]);
    assert!(
        !missing && err.contains("no connection with id 99"),
        "{err}"
    );
}

#[test]
fn rotating_an_apps_secret_prints_it_as_creating_the_app_does() {
    let database = TestDatabase::sqlite();
    let url = database.url();
    let (created, made, err) = tributary(
        &url,
        &[
            "apps",
            "create",
            "--name",
            "Budget",
            "--redirect-uri",
            "https://budget.example/cb",
        ],
    );
    assert!(created, "{made}{err}");
    let field = |text: &str, name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name))
            .map(|value| value.trim().to_owned())
            .unwrap_or_else(|| panic!("no `{name}` line in {text:?}"))
    };
    let client_id = field(&made, "client_id:");
    let (rotated, new, err) = tributary(&url, &["apps", "rotate-secret", &client_id]);
    assert!(rotated, "{new}{err}");
    assert_eq!(field(&new, "client_id:"), client_id);
    assert_ne!(
        field(&new, "client_secret:"),
        field(&made, "client_secret:")
    );
}

/// Every stored transaction of `email`'s user: (date, amount, description).
fn stored(database: &TestDatabase, email: &str) -> Vec<(String, String, String)> {
    let user =
        tributary_storage::users::find_personal_user(&mut database.db().conn().unwrap(), email)
            .unwrap()
            .unwrap();
    tributary_storage::testing::transaction_rows(database.db(), user.id)
}

#[test]
fn a_daily_camt_series_imports_whole_one_file_at_a_time_in_any_order_or_all_at_once() {
    let days = 10;
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, bytes) in tributary_providers::import::samples::daily_camt053_series(days) {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        paths.push(path.to_string_lossy().into_owned());
    }
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        let url = database.url();
        for email in ["one@example.com", "all@example.com"] {
            assert!(tributary(&url, &["users", "create", email]).0);
        }
        // Newest first, one file a run.
        for path in paths.iter().rev() {
            let (ok, out, err) = tributary(&url, &["import", "--user", "one@example.com", path]);
            assert!(ok, "{out}{err}");
        }
        let mut all = vec!["import", "--user", "all@example.com"];
        all.extend(paths.iter().map(String::as_str));
        let (ok, out, err) = tributary(&url, &all);
        assert!(ok, "{out}{err}");
        assert!(
            !out.contains("may be missing"),
            "the balances run on from day to day: {out}"
        );
        let (ok, again, _) = tributary(&url, &all);
        assert!(ok && again.contains("0 new, 0 updated"), "{again}");
        let one = stored(&database, "one@example.com");
        assert_eq!(one.len(), 3 * days as usize, "twins kept apart: {one:?}");
        assert_eq!(one, stored(&database, "all@example.com"));
    }
}

/// (name, currency, count, signed sum) of each account of `email`'s user.
fn accounts_of(database: &TestDatabase, email: &str) -> Vec<(String, String, usize, String)> {
    use tributary_domain::access::Viewer;
    use tributary_domain::money::Decimal;
    use tributary_storage::read::{self, TransactionFilter};
    let conn = &mut *database.db().conn().unwrap();
    let user = tributary_storage::users::find_personal_user(conn, email)
        .unwrap()
        .unwrap();
    let all = TransactionFilter {
        include_pending: true,
        ..Default::default()
    };
    read::list_accounts(conn, &Viewer::whole_user(user.id))
        .unwrap()
        .into_iter()
        .map(|a| {
            let rows = read::list_transactions(conn, a.id, &all, None, None).unwrap();
            let sum: Decimal = rows.iter().map(|t| t.amount).sum();
            (a.name, a.currency, rows.len(), sum.to_string())
        })
        .collect()
}

#[test]
fn import_puts_files_naming_no_account_into_the_account_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    };
    // A US card export, and the next month's overlapping it by one row.
    let card = write(
        "card.csv",
        "Transaction Date,Description,Amount\n03/02/2026,NYC Coffee,-4.50\n03/03/2026,Bookshop,-23.99\n03/05/2026,Payment Thank You,100.00\n",
    );
    let later = write(
        "later.csv",
        "Transaction Date,Description,Amount\n03/05/2026,Payment Thank You,100.00\n04/01/2026,Subway,-2.90\n",
    );
    let euro = write(
        "euro.csv",
        "Date,Description,Amount,Currency\n2026-03-02,Groceries,-42.10,EUR\n",
    );
    let (ok, help, _) = tributary("sqlite://unused.db", &["import", "--help"]);
    assert!(ok);
    for flag in [
        "--account <ID>",
        "--new-account <NAME>",
        "--currency <CODE>",
    ] {
        assert!(help.contains(flag), "{help}");
    }
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        let url = database.url();
        let email = "card@example.com";
        assert!(tributary(&url, &["users", "create", email]).0);
        // Both files into one new account: the first makes it.
        let (ok, out, err) = tributary(
            &url,
            &[
                "import",
                "--user",
                email,
                "--new-account",
                "Visa card",
                "--currency",
                "usd",
                &card,
                &later,
            ],
        );
        assert!(ok, "{out}{err}");
        let into: Vec<&str> = out
            .lines()
            .filter(|l| l.contains("statements naming no account went into account"))
            .collect();
        assert_eq!(into.len(), 2, "{out}");
        assert_eq!(into[0], into[1], "{out}");
        assert!(
            out.contains("3 new, 0 updated") && out.contains("1 new, 0 updated, 1 skipped"),
            "{out}"
        );
        assert!(!out.contains("name no currency"), "{out}");
        let id: String = into[0].chars().filter(char::is_ascii_digit).collect();
        assert_eq!(
            accounts_of(&database, email),
            [(
                "Visa card".to_owned(),
                "USD".to_owned(),
                4,
                "68.61".to_owned()
            )]
        );
        // Refusals name the flag and store nothing.
        for (args, says) in [
            (
                vec!["--account", id.as_str(), euro.as_str()],
                vec!["--account: the file's amounts are in EUR, but \"Visa card\" is in USD"],
            ),
            (
                vec!["--account", "999999", card.as_str()],
                vec![
                    "--account: there is no account 999999 among your accounts of imported statements",
                    "card@example.com's are",
                    "\"Visa card\" (USD)",
                ],
            ),
            (
                vec![
                    "--new-account",
                    "Visa card",
                    "--currency",
                    "USD",
                    card.as_str(),
                ],
                vec![
                    "--new-account: one of your accounts of imported statements is named \"Visa card\" already",
                ],
            ),
            (
                vec!["--new-account", "Card", "--currency", "US", card.as_str()],
                vec!["--currency: `US` is not a currency"],
            ),
            (
                vec!["--new-account", "Card", card.as_str()],
                vec!["--currency"],
            ),
            (
                vec![
                    "--account",
                    "1",
                    "--new-account",
                    "Card",
                    "--currency",
                    "USD",
                    card.as_str(),
                ],
                vec!["--new-account"],
            ),
        ] {
            let mut all = vec!["import", "--user", email];
            all.extend(args.iter().copied());
            let (ok, out, err) = tributary(&url, &all);
            assert!(!ok, "{args:?}: {out}");
            assert!(says.iter().all(|s| err.contains(s)), "{args:?}: {err}");
        }
        assert_eq!(accounts_of(&database, email).len(), 1);
        // Without a choice, the card goes to an account of its layout's.
        let (ok, out, err) = tributary(&url, &["import", "--user", email, &card]);
        assert!(
            ok && out.contains("note: 3 row(s) name no currency"),
            "{out}{err}"
        );
        assert_eq!(
            accounts_of(&database, email)[1],
            (
                "Imported EUR account (CSV: Transaction Date, Description, Amount)".to_owned(),
                "EUR".to_owned(),
                3,
                "71.51".to_owned()
            )
        );
    }
}

/// A name that would drive a terminal: red text, a cleared screen, and a
/// right-to-left override that shows `gpj.exe` as `exe.jpg`.
const HOSTILE_NAME: &str = "evil\u{1b}[31m\u{1b}[2J\r\u{202e}gpj.exe";

/// Whether `text` holds a character the CLI must never print raw.
fn drives_a_terminal(text: &str) -> bool {
    text.chars()
        .any(|c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c))
}

#[test]
fn names_with_control_or_bidi_characters_are_refused_and_old_ones_are_listed_escaped() {
    use tributary_domain::model::BillingModel;
    use tributary_storage::{apps, users};
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        let url = database.url();
        assert!(tributary(&url, &["users", "create", "names@example.com"]).0);
        for (args, refused) in [
            (
                vec!["keys", "create", "--user", "names@example.com", "--name"],
                "U+001B",
            ),
            (
                vec![
                    "simplefin",
                    "create",
                    "--user",
                    "names@example.com",
                    "--name",
                ],
                "U+001B",
            ),
            (
                vec![
                    "apps",
                    "create",
                    "--redirect-uri",
                    "https://app.example/cb",
                    "--name",
                ],
                "U+001B",
            ),
        ] {
            let mut args = args;
            args.push(HOSTILE_NAME);
            let (made, out, err) = tributary(&url, &args);
            assert!(!made, "{args:?}: {out}");
            assert!(err.contains("--name") && err.contains(refused), "{err}");
            assert!(
                !drives_a_terminal(&out) && !drives_a_terminal(&err),
                "{err:?}"
            );
        }
        let (made, _, err) = tributary(
            &url,
            &[
                "keys",
                "create",
                "--user",
                "names@example.com",
                "--name",
                "abc\u{202e}gpj.exe",
            ],
        );
        assert!(!made && err.contains("U+202E"), "{err}");

        // Names stored before the rule (or by another tool) are listed
        // escaped, one line each.
        {
            let conn = &mut *database.db().conn().unwrap();
            let user = users::find_personal_user(conn, "names@example.com")
                .unwrap()
                .unwrap();
            let now = chrono::Utc::now();
            tributary_auth::api_keys::issue(conn, user.id, HOSTILE_NAME, None, now).unwrap();
            tributary_auth::simplefin::create(
                conn,
                user.id,
                HOSTILE_NAME,
                None,
                "http://127.0.0.1:8080/simplefin/claim",
                now,
            )
            .unwrap();
            apps::create_app(
                conn,
                &apps::NewApp {
                    client_id: "app_hostile",
                    name: HOSTILE_NAME,
                    client_secret_hash: None,
                    billing_model: BillingModel::Integrator,
                    default_max_accounts: None,
                    redirect_uris: &["https://app.example/cb".to_owned()],
                    now: now.naive_utc(),
                },
            )
            .unwrap();
        }
        for args in [
            vec!["keys", "list", "--user", "names@example.com"],
            vec!["simplefin", "list", "--user", "names@example.com"],
            vec!["apps", "list"],
        ] {
            let (listed, out, err) = tributary(&url, &args);
            assert!(listed, "{args:?}: {err}");
            assert!(!drives_a_terminal(&out), "{args:?}: {out:?}");
            assert!(
                out.contains("evil\\u{1b}[31m\\u{1b}[2J\\u{d}\\u{202e}gpj.exe"),
                "{args:?}: {out}"
            );
            assert_eq!(
                out.lines().count(),
                2,
                "{args:?}: a header and one row: {out}"
            );
        }
    }
}

/// `tributary` on `database_url` with `env` set (and no public URL or bind
/// address from the test's own environment).
fn tributary_with(
    database_url: &str,
    env: &[(&str, &str)],
    args: &[&str],
) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(args)
        .env("TRIBUTARY_DATABASE_URL", database_url)
        .env_remove("TRIBUTARY_PUBLIC_URL")
        .env_remove("TRIBUTARY_BIND")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn deleting_a_user_asks_for_yes_then_removes_everything_of_theirs() {
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        let url = database.url();
        for email in ["gone@example.com", "stays@example.com"] {
            assert!(tributary(&url, &["users", "create", email]).0);
            assert!(tributary(&url, &["keys", "create", "--user", email]).0);
        }
        let (deleted, out, err) = tributary(&url, &["users", "delete", "gone@example.com"]);
        assert!(!deleted, "{out}");
        assert!(err.contains("--yes"), "{err}");
        let (_, listed, _) = tributary(&url, &["users", "list"]);
        assert!(
            listed.contains("gone@example.com"),
            "nothing was deleted: {listed}"
        );
        let (deleted, out, err) =
            tributary(&url, &["users", "delete", "gone@example.com", "--yes"]);
        assert!(deleted, "{err}");
        assert!(out.contains("Deleted user gone@example.com"), "{out}");
        let (_, listed, _) = tributary(&url, &["users", "list"]);
        assert!(!listed.contains("gone@example.com"), "{listed}");
        assert!(listed.contains("stays@example.com"), "{listed}");
        let (keys, _, err) = tributary(&url, &["keys", "list", "--user", "gone@example.com"]);
        assert!(!keys && err.contains("no user gone@example.com"), "{err}");
        let (keys, out, _) = tributary(&url, &["keys", "list", "--user", "stays@example.com"]);
        assert!(keys && out.contains("default"), "{out}");
        let (again, _, err) = tributary(&url, &["users", "delete", "gone@example.com", "--yes"]);
        assert!(!again && err.contains("no user gone@example.com"), "{err}");
    }
}

#[test]
fn removing_a_developer_refuses_while_they_own_apps() {
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        let url = database.url();
        let (missing, _, err) = tributary(&url, &["developers", "remove", "nobody@example.com"]);
        assert!(!missing && err.contains("is not a developer"), "{err}");
        for email in ["owner@example.com", "idle@example.com"] {
            assert!(tributary(&url, &["developers", "add", email]).0);
        }
        {
            let conn = &mut *database.db().conn().unwrap();
            let owner = tributary_storage::developers::find_by_email(conn, "owner@example.com")
                .unwrap()
                .unwrap();
            tributary_storage::developers::create_owned_app(
                conn,
                owner.id,
                &tributary_storage::apps::NewApp {
                    client_id: "app_owned",
                    name: "Budget Buddy",
                    client_secret_hash: None,
                    billing_model: tributary_domain::model::BillingModel::Integrator,
                    default_max_accounts: None,
                    redirect_uris: &[],
                    now: chrono::Utc::now().naive_utc(),
                },
            )
            .unwrap();
        }
        let (removed, _, err) = tributary(&url, &["developers", "remove", "owner@example.com"]);
        assert!(!removed, "a developer who owns apps stays");
        assert!(err.contains("Budget Buddy"), "{err}");
        let (removed, out, err) = tributary(&url, &["developers", "remove", "idle@example.com"]);
        assert!(removed, "{err}");
        assert!(out.contains("Removed developer idle@example.com"), "{out}");
        let (_, listed, _) = tributary(&url, &["developers", "list"]);
        assert!(!listed.contains("idle@example.com"), "{listed}");
        assert!(listed.contains("owner@example.com"), "{listed}");
    }
}

#[test]
fn printed_links_follow_the_bind_address_or_the_public_url() {
    let database = TestDatabase::sqlite();
    let url = database.url();
    assert!(tributary(&url, &["users", "create", "links@example.com"]).0);
    let link = |env: &[(&str, &str)]| {
        let (ok, out, err) =
            tributary_with(&url, env, &["users", "login-link", "links@example.com"]);
        assert!(ok, "{err}");
        out.lines()
            .find(|l| l.contains("/sign-in/link/"))
            .unwrap_or_else(|| panic!("a link in {out}"))
            .to_owned()
    };
    assert!(link(&[]).starts_with("http://127.0.0.1:8080/sign-in/link/"));
    assert!(
        link(&[("TRIBUTARY_BIND", "0.0.0.0:9123")])
            .starts_with("http://127.0.0.1:9123/sign-in/link/")
    );
    assert!(
        link(&[("TRIBUTARY_BIND", "[::]:9124")]).starts_with("http://[::1]:9124/sign-in/link/")
    );
    assert!(
        link(&[
            ("TRIBUTARY_BIND", "0.0.0.0:9123"),
            ("TRIBUTARY_PUBLIC_URL", "https://money.example.com/"),
        ])
        .starts_with("https://money.example.com/sign-in/link/")
    );
    // A SimpleFIN setup token carries the same address.
    let (ok, out, err) = tributary_with(
        &url,
        &[("TRIBUTARY_BIND", "127.0.0.1:9125")],
        &["simplefin", "create", "--user", "links@example.com"],
    );
    assert!(ok, "{err}");
    let token = out
        .lines()
        .find(|l| !l.contains(' ') && !l.is_empty())
        .unwrap_or_else(|| panic!("a setup token in {out}"));
    use base64::Engine as _;
    let claim = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(token.trim())
            .unwrap(),
    )
    .unwrap();
    assert!(
        claim.starts_with("http://127.0.0.1:9125/simplefin/claim/"),
        "{claim}"
    );
}

#[test]
fn help_lines_and_refusals_name_what_to_do() {
    let database = TestDatabase::sqlite();
    let url = database.url();
    let (_, help, _) = tributary(&url, &["import", "--help"]);
    let user_line = help
        .lines()
        .find(|l| l.trim_start().starts_with("--user"))
        .unwrap_or_else(|| panic!("--user in {help}"));
    assert!(
        user_line.contains("E-mail of the Personal user"),
        "{user_line}"
    );
    assert!(tributary(&url, &["users", "create", "hooks@example.com"]).0);
    let (made, _, err) = tributary_with(
        &url,
        &[],
        &[
            "webhooks",
            "create",
            "--user",
            "hooks@example.com",
            "--url",
            "http://192.168.1.20/hook",
        ],
    );
    assert!(!made);
    assert!(err.contains("TRIBUTARY_OUTBOUND_ALLOW_PRIVATE"), "{err}");
}

#[test]
fn the_worker_says_what_each_job_did_at_the_default_level() {
    use std::io::BufRead as _;
    let database = TestDatabase::sqlite();
    let url = database.url();
    assert!(tributary(&url, &["users", "create", "worker@example.com"]).0);
    let (connected, out, err) = tributary(
        &url,
        &["connect", "sandbox", "--user", "worker@example.com"],
    );
    assert!(connected, "{out}{err}");
    let job = {
        let conn = &mut *database.db().conn().unwrap();
        let connection = tributary_storage::connections::list_connections(conn, None)
            .unwrap()
            .into_iter()
            .next()
            .unwrap();
        tributary_providers::sync::request_sync(
            conn,
            &connection,
            tributary_domain::model::SyncJobKind::OnDemand,
            tributary_providers::sync::Requester::Operator,
            chrono::Utc::now().naive_utc(),
        )
        .unwrap()
        .job_id
    };
    let mut worker = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("worker")
        .env("TRIBUTARY_DATABASE_URL", &url)
        .env_remove("RUST_LOG")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = worker.stderr.take().unwrap();
    let line = std::io::BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        // After the line saying it claimed the job, the one saying what came of it.
        .find(|line| line.contains(&format!("job {job} (connection")) && line.contains("): "))
        .unwrap_or_else(|| panic!("no line for job {job}"));
    let _ = worker.kill();
    let _ = worker.wait();
    assert!(line.contains(" INFO "), "{line}");
    assert!(line.contains("synced") && line.contains(" ms"), "{line}");
}

#[test]
fn a_missing_database_is_refused_unless_asked_to_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nowhere.db");
    let url = format!("sqlite://{}", path.display());
    let (listed, out, err) = tributary(&url, &["users", "list"]);
    assert!(!listed, "{out}");
    assert!(
        err.contains("there is no database at") && err.contains("tributary migrate"),
        "{err}"
    );
    assert!(!path.exists(), "nothing was created");
    // --create makes it (so does `migrate`); then every command says which
    // database it uses.
    let (listed, _, err) = tributary(&url, &["users", "list", "--create"]);
    assert!(listed, "{err}");
    assert!(path.exists());
    let (created, _, err) = tributary(&url, &["users", "create", "here@example.com"]);
    assert!(created, "{err}");
    assert!(err.contains(&format!("using the database {url}")), "{err}");
    let other = dir.path().join("migrated.db");
    let other_url = format!("sqlite://{}", other.display());
    let (migrated, out, err) = tributary(&other_url, &["migrate"]);
    assert!(migrated && other.exists(), "{out}{err}");
}

/// `tributary import` reads OFX files from disk in two passes: what it
/// stores, what it says, and what it refuses are those of a file read
/// whole.
#[test]
fn import_reads_ofx_files_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let checking = dir.path().join("checking.ofx");
    std::fs::write(
        &checking,
        tributary_storage::testing::testdata_bytes("ofxparse/fixtures/checking.ofx"),
    )
    .unwrap();
    let checking = checking.to_string_lossy().into_owned();
    // Naming no account, in USD.
    let unnamed = dir.path().join("unnamed.qfx");
    std::fs::write(
        &unnamed,
        "OFXHEADER:100\nDATA:OFXSGML\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD<BANKTRANLIST>\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260302<TRNAMT>-4.50<FITID>A1<NAME>Coffee</STMTTRN>\
         </BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>",
    )
    .unwrap();
    let unnamed = unnamed.to_string_lossy().into_owned();
    let broken = dir.path().join("broken.ofx");
    std::fs::write(&broken, "OFXHEADER:100\n\n<OFX><BANKMSGSRSV1><STMTRS").unwrap();
    let broken = broken.to_string_lossy().into_owned();
    for database in TestDatabase::all() {
        let _ = writeln!(std::io::stderr(), "-- on {:?}", database.backend());
        let url = database.url();
        let email = "ofx@example.com";
        assert!(tributary(&url, &["users", "create", email]).0);
        let (ok, out, err) = tributary(&url, &["import", "--user", email, &checking]);
        assert!(ok, "{out}{err}");
        assert!(
            out.contains("1 statement(s), 1 account(s); 3 new, 0 updated, 0 skipped"),
            "{out}"
        );
        let (ok, out, err) = tributary(&url, &["import", "--user", email, &checking]);
        assert!(ok, "{out}{err}");
        assert!(out.contains("0 new, 0 updated, 3 skipped"), "{out}");
        // A currency the file does not state is refused, naming the flag.
        let into_new_account = |currency: &str| {
            tributary(
                &url,
                &[
                    "import",
                    "--user",
                    email,
                    "--new-account",
                    "Cash",
                    "--currency",
                    currency,
                    &unnamed,
                ],
            )
        };
        let (ok, out, err) = into_new_account("EUR");
        assert!(!ok, "{out}");
        assert!(
            err.contains("--currency: the file's amounts are in USD")
                && err.contains("nothing of this file was stored"),
            "{err}"
        );
        let (ok, out, err) = into_new_account("USD");
        assert!(ok, "{out}{err}");
        assert!(
            out.contains("1 new") && out.contains("went into account"),
            "{out}"
        );
        let (ok, _, err) = tributary(
            &url,
            &["import", "--user", email, "--format", "ofx", &broken],
        );
        assert!(!ok);
        assert!(
            err.contains("broken.ofx: ") && err.contains("nothing of this file was stored"),
            "{err}"
        );
    }
}
