//! Every example in README.md and docs/*.md runs as written, and its output
//! still looks the way the document shows it.
//!
//! Each document is read top to bottom in a world of its own (a fresh SQLite
//! file, a working directory with the statement files it names, local fakes
//! of SimpleFIN, GoCardless and the other providers): `sh` blocks are run line by line, `curl`
//! through the real curl against real servers on real ports, `tributary`
//! through the real binary. What a document shows after a command — a
//! comment line right below it, or a `text` block right after its `sh`
//! block — is compared with what the command printed:
//!
//! - JSON (`# {"user": {…}}`, or the short form `{"accounts":[{id,name}]}`)
//!   must have exactly the keys shown (a `key?` may be left out), at every
//!   level shown; literal values
//!   must be equal, `…` matches any rest, and ids shown (`usr_vggg…`,
//!   `tat_…`) stand for the real ones in the lines that follow;
//! - a status after a command (`# 204`) must be the status answered;
//! - text lines must appear in order, word for word, where a word holding a
//!   digit matches any word holding a digit.
//!
//! A line the runner does not know how to run fails the test, so a new
//! example cannot go unchecked. `<!-- docs-test: … -->` lines in a document
//! are steps a reader does elsewhere (in a browser, say) and the runner does
//! here. Synopsis lines (`[optional]`, `a | b`) are checked against
//! `--help` instead of being run.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use actix_web::dev::ServerHandle;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use tributary_app::config::{Config, environment_help};
use tributary_auth::oauth;
use tributary_domain::clock::{Clock, SystemClock};
use tributary_domain::model::SyncJobKind;
use tributary_e2e::akahu::{self, AkahuFake};
use tributary_e2e::bunq::{self, BunqFake};
use tributary_e2e::enablebanking::{APPLICATION_ID, EnableBankingFake};
use tributary_e2e::fakes::{SimpleFinBridge, gocardless_api};
use tributary_e2e::ibkr::{self, IbkrFake};
use tributary_e2e::plaid::{self, PlaidFake};
use tributary_e2e::pluggy::{self, PluggyFake};
use tributary_e2e::snaptrade::{self, SnapTradeFake};
use tributary_e2e::starling::{self, StarlingFake};
use tributary_e2e::teller::{self, TellerFake};
use tributary_e2e::truelayer::{self, TrueLayerFake};
use tributary_e2e::up::{self, UpFake};
use tributary_http::server::{self, Interface};
use tributary_providers::import::samples::daily_camt053_series;
use tributary_providers::sandbox::{self, SandboxConnector};
use tributary_providers::sync::SyncEngine;
use tributary_providers::{Registry, worker::worker_id};
use tributary_storage::testing::{TestDatabase, testdata_bytes};
use tributary_storage::{Database, DatabaseUrl, PoolOptions, apps};

const TRIBUTARY: &str = env!("CARGO_BIN_EXE_tributary-cli");
/// The README's test command, which `.ci/run` must run.
const TEST_COMMAND: &str = "cargo test --workspace";

/// Writes Teller's certificate, private key and the fake's authority into
/// `dir`; their paths, in that order.
fn write_teller_files(dir: &Path, teller: &TellerFake) -> [String; 3] {
    let identity = teller.operator_identity();
    let key_at = identity.find("-----BEGIN PRIVATE KEY-----").unwrap();
    let (certificate, key) = identity.split_at(key_at);
    [
        ("teller-certificate.pem", certificate),
        ("teller-private-key.pem", key),
        ("teller-authority.pem", teller.authority_pem()),
    ]
    .map(|(name, text)| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    })
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[actix_web::test]
async fn every_example_in_the_readme_and_docs_runs_as_written() {
    let gocardless = gocardless_api().await;
    let enablebanking = EnableBankingFake::start().await;
    let plaid = PlaidFake::start().await;
    let snaptrade = SnapTradeFake::start().await;
    let akahu = AkahuFake::start().await;
    let up = UpFake::start().await;
    let starling = StarlingFake::start().await;
    let ibkr = IbkrFake::start().await;
    let truelayer = TrueLayerFake::start().await;
    let bunq = BunqFake::start().await;
    let teller = TellerFake::start().await;
    let pluggy = PluggyFake::start().await;
    let postgres = TestDatabase::postgres();
    let mut documents = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    documents.extend(docs);
    let mut failures = Vec::new();
    let mut ran = 0;
    for path in documents {
        let name = path
            .strip_prefix(root())
            .unwrap_or(&path)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        // A setup token is claimed once: each document gets its own bridge.
        let bridge = SimpleFinBridge::start().await;
        let mut world = World::new(
            &bridge,
            &gocardless,
            (
                &enablebanking,
                &plaid,
                &snaptrade,
                &akahu,
                &up,
                &starling,
                &ibkr,
                &truelayer,
                &bunq,
                &teller,
                &pluggy,
            ),
            postgres.as_ref(),
        );
        for piece in pieces(&text) {
            ran += 1;
            if let Err(problem) = world.run(&piece).await {
                failures.push(format!("{name}:{}: {problem}", piece.line));
            }
        }
        world.stop().await;
    }
    assert!(ran > 60, "only {ran} examples found: is the parser broken?");
    assert!(
        failures.is_empty(),
        "{} example(s) do not hold:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------
// Reading the documents

#[derive(Debug, Clone, PartialEq)]
enum What {
    /// A command line (continuations joined, trailing comment cut) with the
    /// output shown right below it and a status in its trailing comment.
    Command {
        line: String,
        shown: Vec<String>,
        status: Option<u16>,
    },
    /// A `text` block: what the last command printed.
    Output(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
struct Piece {
    line: usize,
    what: What,
}

fn pieces(text: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut fence: Option<(usize, String, Vec<String>)> = None;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = raw.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            match fence.take() {
                None => fence = Some((number, info.trim().to_owned(), Vec::new())),
                Some((start, info, lines)) => match info.as_str() {
                    "sh" => pieces.extend(commands(start, &lines)),
                    "text" => pieces.push(Piece {
                        line: start,
                        what: What::Output(lines),
                    }),
                    _ => {}
                },
            }
            continue;
        }
        if let Some((_, _, lines)) = fence.as_mut() {
            lines.push(raw.to_owned());
        } else if let Some(step) = trimmed
            .strip_prefix("<!-- docs-test:")
            .and_then(|rest| rest.strip_suffix("-->"))
        {
            pieces.push(Piece {
                line: number,
                what: What::Command {
                    line: step.trim().to_owned(),
                    shown: Vec::new(),
                    status: None,
                },
            });
        }
    }
    pieces
}

/// The commands of an `sh` block starting at line `start`.
fn commands(start: usize, lines: &[String]) -> Vec<Piece> {
    let mut pieces: Vec<Piece> = Vec::new();
    let mut joined = String::new();
    let mut first_line = 0;
    // Output comments attach to the command right above them.
    let mut attach = false;
    for (offset, raw) in lines.iter().enumerate() {
        let number = start + 1 + offset;
        let trimmed = raw.trim();
        if joined.is_empty() {
            first_line = number;
        }
        if let Some(continued) = trimmed.strip_suffix('\\') {
            joined.push_str(continued.trim_end());
            joined.push(' ');
            continue;
        }
        joined.push_str(trimmed);
        let logical = std::mem::take(&mut joined);
        if logical.is_empty() {
            attach = false;
        } else if let Some(comment) = logical.strip_prefix('#') {
            if attach
                && let Some(What::Command { shown, .. }) = pieces.last_mut().map(|p| &mut p.what)
            {
                shown.push(comment.trim().to_owned());
            }
        } else {
            let (line, trailing) = split_comment(&logical);
            let status = trailing
                .split_whitespace()
                .next()
                .and_then(|word| word.parse::<u16>().ok())
                .filter(|code| (100..600).contains(code));
            pieces.push(Piece {
                line: first_line,
                what: What::Command {
                    line,
                    shown: Vec::new(),
                    status,
                },
            });
            attach = true;
        }
    }
    pieces
}

/// A command and its trailing comment (a ` #` outside quotes).
fn split_comment(line: &str) -> (String, String) {
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' && previous.is_whitespace() => {
                return (
                    line[..at].trim().to_owned(),
                    line[at + 1..].trim().to_owned(),
                );
            }
            None => {}
        }
        previous = c;
    }
    (line.trim().to_owned(), String::new())
}

// ---------------------------------------------------------------------------
// Running them

/// One document's world.
struct World<'a> {
    dir: tempfile::TempDir,
    /// Exported variables, as a shell session would keep them.
    env: BTreeMap<String, String>,
    /// Text the document shows → the real value it stands for.
    bindings: Vec<(String, String)>,
    /// The servers started so far (the newest last) and their addresses.
    servers: Vec<(ServerHandle, SocketAddr)>,
    /// What the last command printed (a server: its greeting).
    last_output: String,
    bridge: &'a SimpleFinBridge,
    postgres: Option<&'a TestDatabase>,
}

impl<'a> World<'a> {
    fn new(
        bridge: &'a SimpleFinBridge,
        gocardless: &wiremock::MockServer,
        (
            enablebanking,
            plaid,
            snaptrade,
            akahu,
            up,
            starling,
            ibkr,
            truelayer,
            bunq,
            teller,
            pluggy,
        ): (
            &EnableBankingFake,
            &PlaidFake,
            &SnapTradeFake,
            &AkahuFake,
            &UpFake,
            &StarlingFake,
            &IbkrFake,
            &TrueLayerFake,
            &BunqFake,
            &TellerFake,
            &PluggyFake,
        ),
        postgres: Option<&'a TestDatabase>,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        write_statement_files(dir.path());
        // The operator's Teller certificate, key and the fake's authority,
        // as files the way an operator has them.
        let teller_files = write_teller_files(dir.path(), teller);
        // The documents say `tributary`: that name, in a folder first on
        // PATH, is this build's command line (tributary-cli), never another
        // binary of that name left in the target folder.
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink(TRIBUTARY, bin.join("tributary")).unwrap();
        let mut env = BTreeMap::new();
        env.insert(
            "PATH".to_owned(),
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        );
        for (name, value) in [
            // The CLI's GoCardless requests go to the local fake.
            ("TRIBUTARY_GOCARDLESS_URL", gocardless.uri()),
            ("TRIBUTARY_GOCARDLESS_SECRET_ID", "operator".to_owned()),
            (
                "TRIBUTARY_GOCARDLESS_SECRET_KEY",
                "operator-secret".to_owned(),
            ),
            // And its Enable Banking requests to that fake, signed with the
            // tests' key.
            ("TRIBUTARY_ENABLEBANKING_URL", enablebanking.server.uri()),
            ("TRIBUTARY_ENABLEBANKING_APP_ID", APPLICATION_ID.to_owned()),
            (
                "TRIBUTARY_ENABLEBANKING_KEY_FILE",
                root()
                    .join("tests/fixtures/enablebanking-test-key.pem")
                    .display()
                    .to_string(),
            ),
            // And its Plaid requests to that one.
            ("TRIBUTARY_PLAID_URL", plaid.server.uri()),
            ("TRIBUTARY_PLAID_CLIENT_ID", plaid::CLIENT_ID.to_owned()),
            ("TRIBUTARY_PLAID_SECRET", plaid::SECRET.to_owned()),
            // And its SnapTrade requests to that one, which checks their
            // signatures.
            ("TRIBUTARY_SNAPTRADE_URL", snaptrade.server.uri()),
            (
                "TRIBUTARY_SNAPTRADE_CLIENT_ID",
                snaptrade::CLIENT_ID.to_owned(),
            ),
            (
                "TRIBUTARY_SNAPTRADE_CONSUMER_KEY",
                snaptrade::CONSUMER_KEY.to_owned(),
            ),
            // And its Akahu requests to that one.
            ("TRIBUTARY_AKAHU_URL", format!("{}/v1", akahu.server.uri())),
            // And its Up requests to that one.
            ("TRIBUTARY_UP_URL", format!("{}/api/v1", up.server.uri())),
            // And its Starling requests to that one.
            ("TRIBUTARY_STARLING_URL", starling.server.uri()),
            // And its Interactive Brokers requests to that one.
            (
                "TRIBUTARY_IBKR_FLEX_URL",
                format!("{}/AccountManagement/FlexWebService", ibkr.server.uri()),
            ),
            // And its TrueLayer requests (both servers) to that one.
            ("TRIBUTARY_TRUELAYER_AUTH_URL", truelayer.server.uri()),
            ("TRIBUTARY_TRUELAYER_API_URL", truelayer.server.uri()),
            (
                "TRIBUTARY_TRUELAYER_CLIENT_ID",
                truelayer::CLIENT_ID.to_owned(),
            ),
            (
                "TRIBUTARY_TRUELAYER_CLIENT_SECRET",
                truelayer::CLIENT_SECRET.to_owned(),
            ),
            // And its bunq requests to that one, which checks their
            // signatures and signs its answers.
            ("TRIBUTARY_BUNQ_URL", format!("{}/v1", bunq.server.uri())),
            // And its Pluggy requests to that one.
            ("TRIBUTARY_PLUGGY_URL", pluggy.server.uri()),
            // And its Teller requests, with the operator's certificate, to
            // that one's TLS front.
            ("TRIBUTARY_TELLER_URL", teller.url.clone()),
            ("TRIBUTARY_TELLER_CERTIFICATE_FILE", teller_files[0].clone()),
            ("TRIBUTARY_TELLER_PRIVATE_KEY_FILE", teller_files[1].clone()),
            ("TRIBUTARY_TELLER_CA_FILE", teller_files[2].clone()),
            // The SimpleFIN fake's claim and access URLs are on loopback,
            // which the outbound guard refuses unless the operator allows it.
            ("TRIBUTARY_OUTBOUND_ALLOW_PRIVATE", "127.0.0.1".to_owned()),
            // Syncs run where the example runs them (the CLI, a request),
            // not at a worker's whim while the next line reads.
            ("TRIBUTARY_EMBEDDED_WORKER", "off".to_owned()),
            ("RUST_LOG", "warn".to_owned()),
        ] {
            env.insert(name.to_owned(), value);
        }
        let mut bindings = vec![(
            // The default database, relative to where commands run.
            "sqlite://tributary.db".to_owned(),
            format!("sqlite://{}/tributary.db", dir.path().display()),
        )];
        if let Some(postgres) = postgres {
            bind(
                &mut bindings,
                "postgres://tributary@db.internal/tributary".to_owned(),
                postgres.url(),
            );
        }
        World {
            dir,
            env,
            bindings,
            servers: Vec::new(),
            last_output: String::new(),
            bridge,
            postgres,
        }
    }

    async fn stop(mut self) {
        for (handle, _) in self.servers.drain(..) {
            handle.stop(true).await;
        }
    }

    async fn run(&mut self, piece: &Piece) -> Result<(), String> {
        match &piece.what {
            What::Output(lines) => {
                let actual = self.unbind(&self.last_output.clone());
                match_text(lines, &actual, &mut self.bindings)
            }
            What::Command {
                line,
                shown,
                status,
            } => {
                let command = self.substitute(line);
                if self.postgres.is_none() && command.contains("db.internal") {
                    // PostgreSQL is not here and not required: the lines
                    // that need it have nothing to run against.
                    return Ok(());
                }
                self.command(&command, shown, *status)
                    .await
                    .map_err(|problem| format!("`{line}`: {problem}"))
            }
        }
    }

    /// Replaces what the document shows with the real values bound so far.
    fn substitute(&self, text: &str) -> String {
        let mut text = text.to_owned();
        let mut bindings = self.bindings.clone();
        bindings.sort_by_key(|(shown, _)| std::cmp::Reverse(shown.len()));
        for (shown, real) in &bindings {
            text = text.replace(shown.as_str(), real);
        }
        // `tcs_4qKM…`: the start of a value bound in full.
        while let Some(at) = text.find('…') {
            let start = text[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .map_or(0, |i| i + 1);
            let prefix = &text[start..at];
            let Some((_, real)) = bindings.iter().find(|(shown, _)| {
                !prefix.is_empty() && shown.starts_with(prefix) && !shown.contains('…')
            }) else {
                break;
            };
            text = format!("{}{}{}", &text[..start], real, &text[at + '…'.len_utf8()..]);
        }
        if let Some((_, addr)) = self.servers.last() {
            text = text.replace("127.0.0.1:8080", &addr.to_string());
        }
        text
    }

    /// Puts back what the document shows in place of the real values, for
    /// comparing printed text with the document.
    fn unbind(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (shown, real) in &self.bindings {
            if !shown.contains('…') && !real.is_empty() {
                text = text.replace(real.as_str(), shown);
            }
        }
        for (_, addr) in &self.servers {
            text = text.replace(&addr.to_string(), "127.0.0.1:8080");
        }
        text
    }

    async fn command(
        &mut self,
        line: &str,
        shown: &[String],
        status: Option<u16>,
    ) -> Result<(), String> {
        check_variables(line)?;
        let (assignments, rest) = split_assignments(line);
        let words: Vec<&str> = rest.split_whitespace().collect();
        if words.is_empty() || words[0] == "export" {
            let line = line.strip_prefix("export ").unwrap_or(line);
            let (assignments, _) = split_assignments(line);
            for (name, value) in self.evaluate(&assignments)? {
                self.env.insert(name, value);
            }
            return Ok(());
        }
        let prefixed = self.evaluate(&assignments)?;
        match words.as_slice() {
            ["curl", ..] => self.curl(rest, shown, status),
            ["tributary", args @ ..] => self.tributary(args, rest, shown, &prefixed),
            ["cargo", "run", "--release", "-p", package, tail @ ..] => {
                let tail: Vec<&str> = tail.iter().copied().filter(|w| *w != "&").collect();
                match (*package, tail.as_slice()) {
                    ("personal-api", []) => self.serve(Interface::Personal, &prefixed),
                    ("platform-api", []) => self.serve(Interface::Platform, &prefixed),
                    ("tributary", ["--", args @ ..]) => {
                        let rest = format!("tributary {}", args.join(" "));
                        self.tributary(args, &rest, shown, &prefixed)
                    }
                    _ => Err("the runner knows `cargo run` of the two servers and the CLI".into()),
                }
            }
            ["browser-flow", email, redirect_uri] => self.browser_flow(email, redirect_uri),
            ["consent-at-the-bank", shown_return] => self.consent_at_the_bank(shown_return).await,
            ["cargo", "build", args @ ..] => check_build(args),
            ["cargo", "test", ..] => {
                let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
                if rest.trim() == TEST_COMMAND && ci.contains(TEST_COMMAND) {
                    Ok(())
                } else {
                    Err(format!(
                        "the test command is `{TEST_COMMAND}`, and .ci/run runs it"
                    ))
                }
            }
            ["cargo", "install", "cargo-fuzz"] => Ok(()),
            // The benchmark takes minutes and is not part of the tests: check
            // that the target exists and runs the bench crate, and that every
            // option the document passes is one the bench knows.
            ["make", "bench", args @ ..] => {
                let makefile = std::fs::read_to_string(root().join("Makefile")).unwrap();
                let usage = std::fs::read_to_string(root().join("bench/src/main.rs")).unwrap();
                if !makefile.contains("\nbench:") || !makefile.contains("-p tributary-bench") {
                    return Err("the Makefile has no bench target running tributary-bench".into());
                }
                args.iter()
                    .flat_map(|arg| arg.split(['"', '=', ' ']))
                    .filter(|word| word.starts_with("--"))
                    .try_for_each(|flag| {
                        usage
                            .contains(&format!("  {flag} "))
                            .then_some(())
                            .ok_or_else(|| format!("the bench has no option {flag}"))
                    })
            }
            ["cd", dir] => root()
                .join(dir)
                .is_dir()
                .then_some(())
                .ok_or_else(|| format!("there is no directory {dir}")),
            ["cargo", "+nightly", "fuzz", "run", target, ..] => {
                let manifest = std::fs::read_to_string(root().join("fuzz/Cargo.toml")).unwrap();
                manifest
                    .contains(&format!("name = \"{target}\""))
                    .then_some(())
                    .ok_or_else(|| format!("fuzz/Cargo.toml has no target {target}"))
            }
            ["ls", path] => {
                let names = path
                    .strip_prefix("target/release/{")
                    .and_then(|rest| rest.strip_suffix('}'))
                    .ok_or("the runner knows `ls target/release/{…}`")?;
                names.split(',').try_for_each(check_binary)
            }
            [binary, ..] if binary.starts_with("target/release/") => {
                check_binary(binary.trim_start_matches("target/release/"))
            }
            _ => Err("the docs test does not know how to run this line".into()),
        }
    }

    /// Values of `NAME=VALUE` words, as the shell expands them (`$(…)`
    /// included) with the variables exported so far.
    fn evaluate(&self, assignments: &[String]) -> Result<Vec<(String, String)>, String> {
        if assignments.is_empty() {
            return Ok(Vec::new());
        }
        let names: Vec<String> = assignments
            .iter()
            .map(|a| a.split('=').next().unwrap().to_owned())
            .collect();
        let script = format!(
            "{}\nprintf '%s\\0' {}",
            assignments.join(" "),
            names
                .iter()
                .map(|n| format!("\"${n}\""))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let output = self.shell(&script, None)?;
        if !output.status.success() {
            return Err(format!(
                "the assignment failed: {}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let values = String::from_utf8(output.stdout).unwrap();
        Ok(names
            .into_iter()
            .zip(values.split('\0').map(str::to_owned))
            .collect())
    }

    fn shell(&self, script: &str, stdin: Option<&str>) -> Result<std::process::Output, String> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(self.dir.path())
            .env_clear()
            .envs(&self.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| format!("sh: {err}"))?;
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
        drop(input);
        child.wait_with_output().map_err(|err| format!("sh: {err}"))
    }

    fn curl(&mut self, line: &str, shown: &[String], status: Option<u16>) -> Result<(), String> {
        let body_file = self.dir.path().join("curl-body");
        let script = format!(
            "curl -sS -o '{}' -w '%{{http_code}}' {}",
            body_file.display(),
            line.trim_start_matches("curl")
        );
        let output = self.shell(&script, None)?;
        let answered: u16 = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .map_err(|_| format!("curl failed: {}", String::from_utf8_lossy(&output.stderr)))?;
        let body = std::fs::read_to_string(&body_file).unwrap_or_default();
        match status {
            Some(expected) if expected != answered => {
                return Err(format!(
                    "answered {answered}, the document shows {expected}: {body}"
                ));
            }
            None if !(200..300).contains(&answered) => {
                return Err(format!("answered {answered}: {body}"));
            }
            _ => {}
        }
        let json: Vec<&String> = shown.iter().filter(|s| !is_status(s)).collect();
        if !json.is_empty() {
            // The shown output names the documented address; its ids are
            // compared (and bound anew), not replaced.
            let mut text = json
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            if let Some((_, addr)) = self.servers.last() {
                text = text.replace("127.0.0.1:8080", &addr.to_string());
            }
            let shape = Shape::parse(&text)
                .map_err(|err| format!("the shown output does not parse: {err}"))?;
            let actual: Value = serde_json::from_str(&body)
                .map_err(|err| format!("the answer is not JSON ({err}): {body}"))?;
            shape
                .check(&actual, "", &mut self.bindings)
                .map_err(|problem| format!("{problem}\n  the answer: {body}"))?;
        }
        self.last_output = body;
        Ok(())
    }

    fn tributary(
        &mut self,
        args: &[&str],
        line: &str,
        shown: &[String],
        prefixed: &[(String, String)],
    ) -> Result<(), String> {
        if line.contains('[') || line.contains(" | ") {
            return check_synopsis(args);
        }
        let mut script = String::new();
        for (name, value) in prefixed {
            script.push_str(&format!("{name}='{value}' "));
        }
        script.push_str(line);
        if args == ["worker"] {
            return self.worker(&script);
        }
        // What a person pastes where a command reads a secret.
        let stdin = if line.contains("--setup-token -") {
            Some(self.bridge.setup_token())
        } else if line.contains("--user-token -") {
            Some(akahu::PERSONAL_USER_TOKEN.to_owned())
        } else if line.contains("connect ibkr") && line.contains("--token -") {
            Some(ibkr::TOKEN.to_owned())
        } else if line.contains("connect starling") && line.contains("--token -") {
            Some(starling::TOKEN.to_owned())
        } else if line.contains("connect bunq") && line.contains("--token -") {
            Some(bunq::API_KEY.to_owned())
        } else if line.contains("connect teller") && line.contains("--token -") {
            Some(teller::TOKEN.to_owned())
        } else if line.contains("connect pluggy") && line.contains("--client-secret -") {
            Some(pluggy::CLIENT_SECRET.to_owned())
        } else if line.contains("--token -") {
            Some(up::TOKEN.to_owned())
        } else {
            None
        };
        let output = self.shell(&script, stdin.as_deref())?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() {
            return Err(format!(
                "exit {:?}: {stdout}{}",
                output.status.code(),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        self.last_output = stdout.clone();
        if shown.is_empty() {
            return Ok(());
        }
        let actual = self.unbind(&stdout);
        match_text(shown, &actual, &mut self.bindings)
    }

    /// `tributary worker` runs until SIGTERM: it must start, say so, and stop
    /// cleanly on the signal.
    fn worker(&mut self, script: &str) -> Result<(), String> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {script}"))
            .current_dir(self.dir.path())
            .env_clear()
            .envs(&self.env)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| format!("sh: {err}"))?;
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .map_err(|err| err.to_string())?;
        let killed = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .map_err(|err| err.to_string())?;
        let status = child.wait().map_err(|err| err.to_string())?;
        if !first.starts_with("Worker ") || !killed.success() || !status.success() {
            return Err(format!("the worker printed {first:?} and exited {status}"));
        }
        Ok(())
    }

    /// `cargo run -p personal-api|platform-api`: the same start-up, in this
    /// process, on a free port.
    fn serve(&mut self, interface: Interface, prefixed: &[(String, String)]) -> Result<(), String> {
        let mut env = self.env.clone();
        env.extend(prefixed.iter().cloned());
        env.insert("TRIBUTARY_BIND".into(), "127.0.0.1:0".into());
        let database = env
            .get("TRIBUTARY_DATABASE_URL")
            .cloned()
            .unwrap_or_else(|| self.substitute("sqlite://tributary.db"));
        env.insert("TRIBUTARY_DATABASE_URL".into(), database);
        let config =
            Config::from_lookup(|name| env.get(name).cloned()).map_err(|err| err.to_string())?;
        // The server runs on a thread of its own, as in its binary, so
        // that this thread may wait on commands that talk to it.
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                match server::start(interface, config).await {
                    Ok(server::Started {
                        server,
                        addrs,
                        greeting,
                        ..
                    }) => {
                        let _ = sender.send(Ok((server.handle(), addrs[0], greeting)));
                        let _ = server.await;
                    }
                    Err(err) => {
                        let _ = sender.send(Err(format!("{err:#}")));
                    }
                }
            });
        });
        let (handle, addr, greeting) = receiver.recv().map_err(|err| err.to_string())??;
        for line in &greeting {
            if let Some(key) = line.strip_prefix("Demo API key (shown only now): ") {
                bind(&mut self.bindings, "trb_…", key);
            }
        }
        self.last_output = greeting.join("\n");
        self.servers.push((handle, addr));
        Ok(())
    }

    /// `browser-flow EMAIL REDIRECT_URI`: what the end user does in the
    /// browser (tests/tests/browser_flow.rs drives those pages): the app
    /// `$CLIENT_ID`'s user EMAIL connects the sandbox bank, it syncs, and
    /// approving sends an authorization code to REDIRECT_URI, bound to the
    /// `tac_…` the document shows.
    /// What the user does at their bank (or at Plaid): opens the link the
    /// last command printed (a local fake's) and consents; where they are
    /// sent back stands for `shown_return` in the lines that follow.
    async fn consent_at_the_bank(&mut self, shown_return: &str) -> Result<(), String> {
        let link = self
            .last_output
            .split_whitespace()
            .find(|word| word.starts_with("http://127.0.0.1:"))
            .ok_or("the last command printed no link to a bank")?
            .to_owned();
        let back = tributary_e2e::fakes::sent_back_from(&link).await;
        self.bindings.push((shown_return.to_owned(), back));
        Ok(())
    }

    fn browser_flow(&mut self, email: &str, redirect_uri: &str) -> Result<(), String> {
        let url = DatabaseUrl::parse(&self.substitute("sqlite://tributary.db"))
            .map_err(|e| e.to_string())?;
        let db = Database::connect(&url, &PoolOptions::default()).map_err(|e| e.to_string())?;
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let client_id = self.env.get("CLIENT_ID").ok_or("no $CLIENT_ID exported")?;
        let mut conn = db.conn().map_err(|e| e.to_string())?;
        let app = apps::find_by_client_id(&mut conn, client_id)
            .map_err(|e| e.to_string())?
            .ok_or("no app $CLIENT_ID")?;
        let user = apps::find_app_user_by_email(&mut conn, app.id, email)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("the app has no user {email}"))?;
        drop(conn);
        let mut registry = Registry::default();
        registry.register(Arc::new(SandboxConnector::default()));
        let engine = SyncEngine::new(db.clone(), registry, clock.clone());
        let connection = engine
            .connect(
                user.id,
                tributary_providers::sandbox::PROVIDER,
                &sandbox::connect_request(email, sandbox::USER_GOOD),
            )
            .map_err(|e| e.to_string())?;
        engine
            .sync_now(connection.id, SyncJobKind::Initial, &worker_id("docs"))
            .map_err(|e| e.to_string())?;
        let mut conn = db.conn().map_err(|e| e.to_string())?;
        let code = oauth::issue_code(
            &mut *conn,
            &app,
            (user.id, None),
            redirect_uri,
            None,
            clock.now().naive_utc(),
        )
        .map_err(|e| e.to_string())?;
        bind(&mut self.bindings, "tac_…", code);
        Ok(())
    }
}

/// `NAME=VALUE` words at the start of a line, and the rest.
fn split_assignments(line: &str) -> (Vec<String>, &str) {
    let mut rest = line.strip_prefix("export ").unwrap_or(line).trim_start();
    let mut assignments = Vec::new();
    loop {
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if name_end == 0
            || !rest[name_end..].starts_with('=')
            || rest.as_bytes()[0].is_ascii_digit()
        {
            break;
        }
        // The value runs to the first blank outside quotes and `$(…)`.
        let mut depth = 0;
        let mut quote: Option<char> = None;
        let mut end = rest.len();
        let bytes: Vec<(usize, char)> = rest.char_indices().collect();
        let mut i = name_end + 1;
        while i < bytes.len() {
            let (at, c) = bytes[i];
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '(') => depth += 1,
                (None, ')') => depth -= 1,
                (None, c) if c.is_whitespace() && depth == 0 => {
                    end = at;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        assignments.push(rest[..end].to_owned());
        rest = rest[end..].trim_start();
    }
    (assignments, rest)
}

/// Binds `shown` to `real`, in place of an earlier binding of `shown` (a
/// refresh token shown again stands for the newest one).
fn bind(bindings: &mut Vec<(String, String)>, shown: impl Into<String>, real: impl Into<String>) {
    let shown = shown.into();
    bindings.retain(|(bound, _)| *bound != shown);
    bindings.push((shown, real.into()));
}

fn is_status(shown: &str) -> bool {
    shown.len() == 3 && shown.parse::<u16>().is_ok()
}

/// Every `TRIBUTARY_*` variable a document uses is one the servers read.
fn check_variables(line: &str) -> Result<(), String> {
    for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if word.starts_with("TRIBUTARY_") && !environment_help().contains(word) {
            return Err(format!("{word} is not a variable `--help` lists"));
        }
    }
    Ok(())
}

fn workspace_binaries() -> Vec<String> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(root().join("bins")).unwrap() {
        names.push(entry.unwrap().file_name().to_string_lossy().into_owned());
    }
    names
}

fn check_binary(name: &str) -> Result<(), String> {
    workspace_binaries()
        .iter()
        .any(|b| b == name)
        .then_some(())
        .ok_or_else(|| format!("{name} is not a binary of the workspace"))
}

/// `cargo build -p A -p B [--features crate/feature]`: the packages and the
/// feature exist.
fn check_build(args: &[&str]) -> Result<(), String> {
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match *word {
            "--release" => {}
            "-p" => check_binary(words.next().ok_or("-p needs a package")?)?,
            "--features" => {
                let feature = words.next().ok_or("--features needs a feature")?;
                let (package, name) = feature.split_once('/').ok_or("crate/feature expected")?;
                let dir = package.trim_start_matches("tributary-");
                let manifest =
                    std::fs::read_to_string(root().join("crates").join(dir).join("Cargo.toml"))
                        .map_err(|_| format!("no crate {package}"))?;
                let features = manifest.split("[features]").nth(1).unwrap_or("");
                if !features
                    .lines()
                    .any(|l| l.trim_start().starts_with(&format!("{name} =")))
                {
                    return Err(format!("{package} has no feature {name}"));
                }
            }
            other => return Err(format!("the runner does not know `cargo build {other}`")),
        }
    }
    Ok(())
}

/// A synopsis (`tributary sync --user E | --connection 1 | --all`,
/// `tributary apps list | rotate-secret ID | redirect-uris add|remove ID
/// URI`): the subcommands it names exist and every flag it shows is one
/// `--help` lists.
fn check_synopsis(args: &[&str]) -> Result<(), String> {
    // The command path: subcommands, up to one that is an alternative.
    let mut path: Vec<&str> = Vec::new();
    let mut help = help_of(&path)?;
    for (index, word) in args.iter().enumerate() {
        let alternative = args.get(index + 1) == Some(&"|") || word.contains('|');
        if alternative || !subcommands(&help).iter().any(|s| s == word) {
            break;
        }
        path.push(word);
        help = help_of(&path)?;
    }
    // Everything below the path: its help and its subcommands' helps.
    let mut all_help = help.clone();
    let mut names = Vec::new();
    let mut pending: Vec<Vec<String>> = subcommands(&help)
        .into_iter()
        .map(|sub| path.iter().map(|p| (*p).to_owned()).chain([sub]).collect())
        .collect();
    while let Some(deeper) = pending.pop() {
        let words: Vec<&str> = deeper.iter().map(String::as_str).collect();
        let text = help_of(&words)?;
        names.push(deeper.last().unwrap().clone());
        pending.extend(
            subcommands(&text)
                .into_iter()
                .map(|sub| deeper.iter().cloned().chain([sub]).collect()),
        );
        all_help.push_str(&text);
    }
    let shown = path.join(" ");
    let rest = &args[path.len()..];
    for (index, word) in rest.iter().enumerate() {
        let after_bar = index > 0 && rest[index - 1] == "|";
        let parts: Vec<&str> = word
            .trim_matches(|c| c == '[' || c == ']')
            .split('|')
            .collect();
        for part in &parts {
            if part.starts_with("--") && !all_help.contains(part) {
                return Err(format!("`tributary {shown} --help` does not list {part}"));
            }
            let is_name =
                !part.is_empty() && part.chars().all(|c| c.is_ascii_lowercase() || c == '-');
            let named = (after_bar || parts.len() > 1 || index == 0) && !part.starts_with('-');
            if is_name && named && !names.iter().any(|n| n == part) {
                return Err(format!("`tributary {shown}` has no subcommand {part}"));
            }
        }
    }
    Ok(())
}

fn help_of(path: &[&str]) -> Result<String, String> {
    let output = Command::new(TRIBUTARY)
        .args(path)
        .arg("--help")
        .output()
        .map_err(|err| err.to_string())?;
    if !output.status.success() {
        return Err(format!("`tributary {} --help` failed", path.join(" ")));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The subcommands a clap help text lists under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

// ---------------------------------------------------------------------------
// Comparing

/// Each shown line appears in `actual`, in order, word for word; a word
/// holding a digit matches any word holding a digit, a word with `…`
/// matches any word with the same start and end. Ids shown become bindings.
fn match_text(
    shown: &[String],
    actual: &str,
    bindings: &mut Vec<(String, String)>,
) -> Result<(), String> {
    let lines: Vec<&str> = actual.lines().collect();
    let mut next = 0;
    for want in shown {
        let want_words: Vec<&str> = want.split_whitespace().collect();
        let found = lines[next..].iter().position(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            words.len() == want_words.len()
                && want_words
                    .iter()
                    .zip(&words)
                    .all(|(w, a)| word_matches(w, a))
        });
        let Some(found) = found else {
            return Err(format!(
                "the output has no line like {want:?} (after line {next}):\n{actual}"
            ));
        };
        let line = lines[next + found];
        for (w, a) in want_words.iter().zip(line.split_whitespace()) {
            if w != &a && is_id(w) {
                bind(bindings, (*w).to_owned(), a.to_owned());
            }
        }
        next += found + 1;
    }
    Ok(())
}

fn word_matches(shown: &str, actual: &str) -> bool {
    if let Some((start, end)) = shown.split_once('…') {
        return actual.starts_with(start)
            && actual.ends_with(end)
            && actual.len() >= start.len() + end.len();
    }
    let digit = |s: &str| s.chars().any(|c| c.is_ascii_digit());
    shown == actual || (digit(shown) && digit(actual)) || same_kind(shown, actual)
}

/// Both are ids with the same prefix: an id shown stands for any id of its
/// kind, whose random characters need not hold a digit
/// (`app_efUiaROuiVKAnvo_cKkbFdOT`).
fn same_kind(shown: &str, actual: &str) -> bool {
    is_id(shown) && is_id(actual) && shown.split('_').next() == actual.split('_').next()
}

/// An id as the documents show them: a short lowercase prefix, `_`, and
/// random characters (`usr_vggg-8dF4…`, `app_7061…`).
fn is_id(text: &str) -> bool {
    let Some((prefix, rest)) = text.split_once('_') else {
        return false;
    };
    (2..=4).contains(&prefix.len())
        && prefix.chars().all(|c| c.is_ascii_lowercase())
        && !rest.is_empty()
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '…')
}

/// `key?` of a shape: a key the answer may leave out (its name, else `None`).
fn optional(key: &str) -> Option<&str> {
    key.strip_suffix('?')
}

/// What a document shows of a JSON answer: JSON, or its short form where an
/// object may list bare keys (`{id,name}`, `liability?` for one an answer
/// may leave out) and a value may be a bare word (`n`, `…`) that matches
/// anything.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Object(Vec<(String, Option<Shape>)>),
    /// Items shown, and whether `…` stands for more (`[]` is empty).
    Array(Vec<Shape>, bool),
    Text(String),
    Word(String),
}

impl Shape {
    fn parse(text: &str) -> Result<Shape, String> {
        let tokens = tokens(text);
        let mut at = 0;
        let shape = Shape::value(&tokens, &mut at)?;
        if at != tokens.len() {
            return Err(format!("unexpected {:?}", tokens[at]));
        }
        Ok(shape)
    }

    fn value(tokens: &[Token], at: &mut usize) -> Result<Shape, String> {
        let token = tokens.get(*at).ok_or("the text ends early")?.clone();
        *at += 1;
        match token {
            Token::Open('{') => {
                let mut members = Vec::new();
                while tokens.get(*at) != Some(&Token::Close('}')) {
                    let key = match tokens.get(*at) {
                        Some(Token::Text(key) | Token::Word(key)) => key.clone(),
                        other => return Err(format!("a key expected, found {other:?}")),
                    };
                    *at += 1;
                    let value = if tokens.get(*at) == Some(&Token::Colon) {
                        *at += 1;
                        Some(Shape::value(tokens, at)?)
                    } else {
                        None
                    };
                    members.push((key, value));
                    if tokens.get(*at) == Some(&Token::Comma) {
                        *at += 1;
                    }
                }
                *at += 1;
                Ok(Shape::Object(members))
            }
            Token::Open('[') => {
                let mut items = Vec::new();
                let mut elided = false;
                while tokens.get(*at) != Some(&Token::Close(']')) {
                    let item = Shape::value(tokens, at)?;
                    if item == Shape::Word("…".into()) {
                        elided = true;
                    } else {
                        items.push(item);
                    }
                    if tokens.get(*at) == Some(&Token::Comma) {
                        *at += 1;
                    }
                    if *at >= tokens.len() {
                        return Err("an array is not closed".into());
                    }
                }
                *at += 1;
                Ok(Shape::Array(items, elided))
            }
            Token::Text(text) => Ok(Shape::Text(text)),
            Token::Word(word) => Ok(Shape::Word(word)),
            other => Err(format!("a value expected, found {other:?}")),
        }
    }

    fn check(
        &self,
        actual: &Value,
        at: &str,
        bindings: &mut Vec<(String, String)>,
    ) -> Result<(), String> {
        let place = if at.is_empty() { "the answer" } else { at };
        match (self, actual) {
            (Shape::Object(members), Value::Object(fields)) => {
                let shown: Vec<&str> = members
                    .iter()
                    .map(|(k, _)| optional(k).unwrap_or(k))
                    .collect();
                let answered: Vec<&str> = fields.keys().map(String::as_str).collect();
                let missing: Vec<&str> = members
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .filter(|k| optional(k).is_none() && !fields.contains_key(*k))
                    .collect();
                let extra: Vec<&&str> = answered.iter().filter(|k| !shown.contains(k)).collect();
                if !missing.is_empty() || !extra.is_empty() {
                    return Err(format!(
                        "{place} has keys {answered:?}; the document shows {shown:?}"
                    ));
                }
                for (key, value) in members {
                    let key = optional(key).unwrap_or(key);
                    if let (Some(value), Some(field)) = (value, fields.get(key)) {
                        value.check(field, &format!("{at}.{key}"), bindings)?;
                    }
                }
                Ok(())
            }
            (Shape::Array(items, elided), Value::Array(values)) => {
                if items.is_empty() && !elided && !values.is_empty() {
                    return Err(format!("{place} has items; the document shows none"));
                }
                if let Some(item) = items.first() {
                    if values.is_empty() {
                        return Err(format!("{place} is empty; the document shows items"));
                    }
                    for (index, value) in values.iter().enumerate() {
                        item.check(value, &format!("{at}[{index}]"), bindings)?;
                    }
                }
                Ok(())
            }
            (Shape::Text(shown), Value::String(real)) => {
                if shown.starts_with('<') && shown.ends_with('>') {
                    // `<nextCursor>`: a value the next lines use.
                    bind(bindings, shown.clone(), real.clone());
                    return Ok(());
                }
                if is_id(shown) {
                    // `usr_vggg…`, `tat_…`: the real id of that kind, which
                    // the next lines use.
                    if same_kind(shown, real) {
                        bind(bindings, shown.clone(), real.clone());
                        return Ok(());
                    }
                } else if word_matches(shown, real)
                    || (looks_like_time(shown) && looks_like_time(real))
                {
                    return Ok(());
                }
                Err(format!("{place} is {real:?}; the document shows {shown:?}"))
            }
            // A number, true, false or null shown is that value; any other
            // bare word (`n`, `…`) stands for any value.
            (Shape::Word(word), value) => match serde_json::from_str::<Value>(word) {
                Ok(shown) if shown == *value => Ok(()),
                Ok(shown) => Err(format!("{place} is {value}; the document shows {shown}")),
                Err(_) => Ok(()),
            },
            (shape, value) => Err(format!("{place} is {value}; the document shows {shape:?}")),
        }
    }
}

fn looks_like_time(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 10 && bytes[..4].iter().all(u8::is_ascii_digit) && bytes[4] == b'-'
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Open(char),
    Close(char),
    Colon,
    Comma,
    Text(String),
    Word(String),
}

fn tokens(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' | '[' => tokens.push(Token::Open(c)),
            '}' | ']' => tokens.push(Token::Close(c)),
            ':' => tokens.push(Token::Colon),
            ',' => tokens.push(Token::Comma),
            '"' => {
                let mut text = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => text.extend(chars.next()),
                        c => text.push(c),
                    }
                }
                tokens.push(Token::Text(text));
            }
            c if c.is_whitespace() => {}
            c => {
                let mut word = c.to_string();
                while let Some(&n) = chars.peek() {
                    if n.is_whitespace() || "{}[],:\"".contains(n) {
                        break;
                    }
                    word.push(n);
                    chars.next();
                }
                tokens.push(Token::Word(word));
            }
        }
    }
    tokens
}

// ---------------------------------------------------------------------------
// The files the documents name, and the steps done elsewhere

/// The statement files the examples upload and import, in the working
/// directory (made or copied here at run time, never kept in the repo).
fn write_statement_files(dir: &Path) {
    let statements = dir.join("statements");
    std::fs::create_dir(&statements).unwrap();
    // A daily camt.053 series with a day missing: the import notes the gap.
    for (index, (name, content)) in daily_camt053_series(4).into_iter().enumerate() {
        if index != 2 {
            std::fs::write(statements.join(name), content).unwrap();
        }
    }
    for (file, source) in [
        (
            statements.join("mt940.sta"),
            "mt940-rs/tests/data/mt940/full/sparkasse/buxtehude.sta",
        ),
        (
            dir.join("statement.xml"),
            "genkgo-camt/data/camt053.v2.multi.statement.xml",
        ),
        (
            dir.join("401k.ofx"),
            "ofxparse/fixtures/investment_401k.ofx",
        ),
    ] {
        std::fs::write(file, testdata_bytes(source)).unwrap();
    }
    std::fs::write(
        dir.join("bank.csv"),
        "when;how much;what\n03.10.2026;-12,50;Bakery\n04.10.2026;1.250,00;Salary\n",
    )
    .unwrap();
    // A US card export naming neither its account nor its currency.
    std::fs::write(
        dir.join("card.csv"),
        "Transaction Date,Description,Amount\n03/02/2026,NYC Coffee,-4.50\n03/03/2026,Bookshop,-23.99\n03/05/2026,Payment Thank You,100.00\n",
    )
    .unwrap();
}

#[test]
fn the_comparisons_refuse_what_the_document_does_not_show() {
    let mut bindings = Vec::new();
    let shape = Shape::parse(r#"{"user": {"user_id": "usr_vggg-8dF4", "limits": {"max_accounts": 5}}, "notes": [], "items": […]}"#).unwrap();
    let good = serde_json::json!({"user": {"user_id": "usr_Real1", "limits": {"max_accounts": 5}}, "notes": [], "items": [1]});
    assert_eq!(shape.check(&good, "", &mut bindings), Ok(()));
    assert_eq!(
        bindings,
        [("usr_vggg-8dF4".to_owned(), "usr_Real1".to_owned())]
    );
    for bad in [
        // A key renamed, one more, a value changed, an id of another kind,
        // an item where the document shows none.
        serde_json::json!({"user": {"userId": "usr_Real1", "limits": {"max_accounts": 5}}, "notes": [], "items": []}),
        serde_json::json!({"user": {"user_id": "usr_Real1", "limits": {"max_accounts": 5}, "x": 1}, "notes": [], "items": []}),
        serde_json::json!({"user": {"user_id": "usr_Real1", "limits": {"max_accounts": 6}}, "notes": [], "items": []}),
        serde_json::json!({"user": {"user_id": "app_Real1", "limits": {"max_accounts": 5}}, "notes": [], "items": []}),
        serde_json::json!({"user": {"user_id": "usr_Real1", "limits": {"max_accounts": 5}}, "notes": ["n"], "items": []}),
    ] {
        assert!(shape.check(&bad, "", &mut Vec::new()).is_err(), "{bad}");
    }
    // `key?`: there or not, but no other key, and the others still required.
    let optional = Shape::parse(r#"{"accounts":[{id,liability?}]}"#).unwrap();
    let with_and_without = serde_json::json!({"accounts": [{"id": 1}, {"id": 2, "liability": {}}]});
    assert_eq!(
        optional.check(&with_and_without, "", &mut Vec::new()),
        Ok(())
    );
    for bad in [
        serde_json::json!({"accounts": [{"id": 1, "other": 2}]}),
        serde_json::json!({"accounts": [{"liability": {}}]}),
    ] {
        assert!(optional.check(&bad, "", &mut Vec::new()).is_err(), "{bad}");
    }
    let shown = vec![
        "client_id:     app_…".to_owned(),
        "Imported 2 of 2 file(s).".to_owned(),
    ];
    assert!(
        match_text(
            &shown,
            "client_id: app_X1\nImported 3 of 3 file(s).\n",
            &mut Vec::new()
        )
        .is_ok()
    );
    assert!(
        match_text(
            &shown,
            "client id: app_X1\nImported 3 of 3 file(s).\n",
            &mut Vec::new()
        )
        .is_err()
    );
    assert!(
        match_text(
            &shown,
            "Imported 3 of 3 file(s).\nclient_id: app_X1\n",
            &mut Vec::new()
        )
        .is_err()
    );
    // Ids of the same kind match whatever their characters (random ones need
    // not hold a digit); ids of another kind do not.
    let shown = vec!["client_id: app_70612zqeqb39zl8woWiZ-SYJ".to_owned()];
    let mut bindings = Vec::new();
    assert!(
        match_text(
            &shown,
            "client_id: app_efUiaROuiVKAnvo_cKkbFdOT",
            &mut bindings
        )
        .is_ok()
    );
    assert_eq!(bindings[0].1, "app_efUiaROuiVKAnvo_cKkbFdOT");
    assert!(
        match_text(
            &shown,
            "client_id: usr_efUiaROuiVKAnvo_cKkbFdOT",
            &mut Vec::new()
        )
        .is_err()
    );
    assert_eq!(
        split_comment(r##"curl -d '{"a": " #"}' $ROOT/x   # 204"##),
        (
            r##"curl -d '{"a": " #"}' $ROOT/x"##.to_owned(),
            "204".to_owned()
        )
    );
}
