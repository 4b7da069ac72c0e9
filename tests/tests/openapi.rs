//! The OpenAPI documents of both interfaces, against the running servers:
//! each document validates (openapi-spec-validator, from PyPI), every
//! operation it lists is routed and answers one of the statuses it
//! documents, and schemathesis (PyPI) fuzzes both servers from their
//! documents with valid credentials and finds nothing: no 5xx, no answer
//! the document does not describe.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use reqwest::{Client, Method, StatusCode};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use tributary_e2e::openapi::{Caller, operations, personal_caller, platform_caller};
use tributary_e2e::platform::start_platform;
use tributary_storage::testing::TestDatabase;

/// The tools' versions this test was written against.
const SCHEMATHESIS: &str = "schemathesis==4.32.5";
const SPEC_VALIDATOR: &str = "openapi-spec-validator==0.9.0";

/// Cases schemathesis makes per operation, at least.
const EXAMPLES_PER_OPERATION: &str = "100";

fn tools() -> PathBuf {
    tributary_e2e::python::venv(
        &std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("openapi-tools-venv"),
        "import schemathesis, openapi_spec_validator",
        &[&[SCHEMATHESIS, SPEC_VALIDATOR]],
    )
}

/// The document passes openapi-spec-validator (OpenAPI 3.1 and JSON
/// Schema 2020-12, `$ref`s resolved).
fn assert_valid(document: &Value) {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), serde_json::to_vec(document).unwrap()).unwrap();
    let output = Command::new(tools())
        .args(["-m", "openapi_spec_validator"])
        .arg(file.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the document does not validate:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(document["openapi"].as_str().unwrap().starts_with("3.1"));
}

/// Every operation of the document, sent with valid credentials: routed
/// (not the unknown-endpoint 404, not 405), answering a documented status.
async fn assert_every_operation_is_routed(caller: &Caller, document: &Value) {
    let client = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut sent = 0;
    for (path, method, operation) in operations(document) {
        let mut request = caller.authorized(
            client.request(method.clone(), caller.url(&path)),
            &operation,
        );
        if method == Method::POST || method == Method::PUT {
            request = request.json(&serde_json::json!({}));
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        assert_ne!(
            status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}: {body}"
        );
        assert!(
            !(status == StatusCode::NOT_FOUND && body.contains("\"NOT_FOUND\"")),
            "{method} {path} is documented but not routed"
        );
        assert!(
            operation["responses"].get(status.as_str()).is_some(),
            "{method} {path} answered {status}, which its document does not list: {body}"
        );
        sent += 1;
    }
    assert!(sent >= 10, "only {sent} operations");
}

/// Runs schemathesis against the running server from its document, off
/// the test's runtime; the number of cases it made is printed.
async fn fuzz(caller: &Caller, name: &'static str) {
    // The checks' settings, and each security scheme's credentials (so
    // that every operation gets the ones its document names).
    let mut config =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/schemathesis.toml")).unwrap();
    for (header, value) in &caller.headers {
        match header.as_str() {
            "x-api-key" => {
                config.push_str(&format!("\n[auth.openapi.apiKey]\napi_key = \"{value}\"\n"))
            }
            _ => config.push_str(&format!(
                "\n[auth.openapi.bearer]\nbearer = \"{}\"\n",
                value.trim_start_matches("Bearer ")
            )),
        }
    }
    if let Some((id, secret)) = &caller.app_basic {
        config.push_str(&format!(
            "\n[auth.openapi.appBasic]\nusername = \"{id}\"\npassword = \"{secret}\"\n"
        ));
    }
    let (base, document_path) = (caller.base.clone(), caller.document_path);
    let outcome =
        actix_web::web::block(move || run_schemathesis(&base, document_path, &config, name))
            .await
            .unwrap();
    if let Err(failures) = outcome {
        panic!("{failures}");
    }
}

fn run_schemathesis(
    base: &str,
    document_path: &str,
    config: &str,
    name: &str,
) -> Result<(), String> {
    let report = tempfile::tempdir().unwrap();
    let config_file = report.path().join("schemathesis.toml");
    std::fs::write(&config_file, config).unwrap();
    let mut command = Command::new(tools().with_file_name("st"));
    command
        .arg("--config-file")
        .arg(&config_file)
        .arg("run")
        .arg(format!("{base}{document_path}"))
        .args(["--url", base])
        .args(["--checks", "all"])
        .args(["--max-examples", EXAMPLES_PER_OPERATION])
        .args(["--seed", "20261124"])
        // One worker: with two threads, CPython 3.11.7's `ast` (which
        // hypothesis uses to describe filters) can fail with "AST
        // constructor recursion depth mismatch" (CPython gh-106905, fixed
        // in 3.11.8), a failure of the tool, not of the API.
        .args(["--workers", "1"])
        .arg("--no-color")
        .args(["--report", "junit"])
        .arg("--report-dir")
        .arg(report.path());
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Straight to stderr: libtest hides a passing test's output, and CI
    // should show how much was tried.
    // The run's summary: the phases, the warnings, how many cases.
    let summary = stdout
        .find("= SUMMARY =")
        .map_or(stdout.as_ref(), |at| &stdout[at..]);
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("schemathesis on {name}:\n{summary}\n").as_bytes(),
    );
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "schemathesis found failures on {name}:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

#[actix_web::test]
async fn both_documents_validate_and_list_exactly_what_the_servers_route() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let personal = tributary_e2e::start(database);
        let caller = personal_caller(&personal);
        let doc = caller.document().await;
        assert_valid(&doc);
        assert_every_operation_is_routed(&caller, &doc).await;
        assert!(doc["components"]["securitySchemes"]["apiKey"].is_object());
        personal.stop().await;
    }
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let platform = start_platform(database);
        let caller = platform_caller(&platform).await;
        let doc = caller.document().await;
        assert_valid(&doc);
        assert_every_operation_is_routed(&caller, &doc).await;
        for scheme in ["bearer", "appBasic", "oauth2"] {
            assert!(
                doc["components"]["securitySchemes"][scheme].is_object(),
                "{scheme}"
            );
        }
        platform.stop().await;
    }
}

#[actix_web::test]
async fn schemathesis_finds_nothing_on_either_interface() {
    let personal = tributary_e2e::start(TestDatabase::sqlite());
    fuzz(&personal_caller(&personal), "the Personal API").await;
    personal.stop().await;
    let platform = start_platform(TestDatabase::sqlite());
    let caller = platform_caller(&platform).await;
    fuzz(&caller, "the Platform API").await;
    platform.stop().await;
}

#[actix_web::test]
async fn the_reference_page_shows_every_operation_and_its_curl_lines_work() {
    let server = tributary_e2e::start(TestDatabase::sqlite());
    let caller = personal_caller(&server);
    let doc = caller.document().await;
    let page = Client::new()
        .get(server.url("/api/v1/docs"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(
        page.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'none'")
    );
    let html = page.text().await.unwrap();
    let mut operations = 0;
    for item in doc["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            let id = operation["operationId"].as_str().unwrap();
            assert!(
                html.contains(&format!("id=\"{id}\"")),
                "{id} is not on the page"
            );
            operations += 1;
        }
    }

    // A search narrows the page to what matches.
    let found = Client::new()
        .get(server.url("/api/v1/docs?q=holdings"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(found.contains("id=\"get_holdings\""));
    assert!(!found.contains("id=\"list_accounts\""));
    assert!(found.contains(&format!("1 of {operations} operations match")));
    let too_long = Client::new()
        .get(server.url(&format!("/api/v1/docs?q={}", "x".repeat(201))))
        .send()
        .await
        .unwrap();
    assert_eq!(too_long.status(), StatusCode::BAD_REQUEST);

    // The page's curl line for the account list, run as a person would
    // (the key in the variable the line names), reads the accounts.
    let unescape = |text: &str| {
        text.replace("&#39;", "'")
            .replace("&#34;", "\"")
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
    };
    let line = html
        .split("<pre class=\"curl\" tabindex=\"0\"><code>")
        .skip(1)
        .map(|rest| unescape(rest.split("</code>").next().unwrap()))
        .find(|line| line.contains("/api/v1/accounts'"))
        .unwrap_or_else(|| panic!("no curl line for the account list"));
    assert_eq!(
        line,
        format!(
            "curl '{}' -H \"x-api-key: $TRIBUTARY_API_KEY\"",
            server.url("/api/v1/accounts")
        )
    );
    let output = Command::new("sh")
        .args(["-c", &format!("{line} --silent --fail")])
        .env("TRIBUTARY_API_KEY", &server.world.alice_key)
        .output()
        .unwrap();
    assert!(output.status.success(), "{line}");
    let read: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(read["accounts"].as_array().unwrap().len() > 1);
    server.stop().await;
}
