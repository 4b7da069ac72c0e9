//! Investment activity in OFX files, against ofxtools (an independent OFX
//! parser from PyPI, installed by this test into a virtualenv under the
//! target directory on first run; the Python side is
//! `tests/ofxtools/activity.py`). The test fails, never skips, when it
//! cannot be installed.
//!
//! Every OFX file of the shared test data that ofxtools reads gives the
//! same investment transactions through Tributary's reader (count, kinds,
//! amounts, units); two of them, uploaded to the real server on both
//! backends, are served the same by `GET
//! /accounts/{id}/investment_transactions`, and uploading them again
//! changes nothing.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use reqwest::{Client, StatusCode};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use tributary_domain::money::Decimal;
use tributary_e2e::TestServer;
use tributary_e2e::harness::personal as on_every_backend;
use tributary_providers::import::{Format, parse};
use tributary_storage::testing::{testdata_bytes, testdata_root};

/// The ofxtools version this test was written against.
const OFXTOOLS: &str = "ofxtools==1.1.1";

/// One piece of activity as both sides state it: the OFX aggregate's name,
/// the cash amount, and the units without their sign (Tributary signs them
/// by the kind; OFX files write a sale's either way).
type Activity = (String, Decimal, Option<Decimal>);

fn ofxtools_python() -> PathBuf {
    tributary_e2e::python::venv(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("ofxtools-venv"),
        "import ofxtools",
        &[&[OFXTOOLS]],
    )
}

/// Every `.ofx` / `.qfx` file of the shared test data, by its path there.
fn ofx_files() -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("ofx") || e.eq_ignore_ascii_case("qfx"))
            {
                out.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let root = testdata_root();
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    files.sort();
    files
}

fn decimal(value: &Value) -> Option<Decimal> {
    value.as_str().map(|text| text.parse().unwrap())
}

/// What ofxtools reads in each of `files`: its activity, or why it refused
/// the file.
fn ofxtools_reads(files: &[String]) -> BTreeMap<String, Result<Vec<Activity>, String>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("ofxtools/activity.py");
    let root = testdata_root();
    let output = Command::new(ofxtools_python())
        .arg(script)
        .args(files.iter().map(|f| root.join(f)))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "activity.py failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read: BTreeMap<String, Value> = serde_json::from_slice(&output.stdout).unwrap();
    files
        .iter()
        .map(|file| {
            let answer = &read[&root.join(file).display().to_string()];
            let result = match answer["activity"].as_array() {
                Some(list) => Ok(sorted(
                    list.iter()
                        .map(|a| {
                            (
                                a["aggregate"].as_str().unwrap().to_owned(),
                                decimal(&a["total"]).unwrap_or(Decimal::ZERO),
                                decimal(&a["units"]).map(|u| u.abs()),
                            )
                        })
                        .collect(),
                )),
                None => Err(answer["refused"].as_str().unwrap().to_owned()),
            };
            (file.clone(), result)
        })
        .collect()
}

fn sorted(mut activity: Vec<Activity>) -> Vec<Activity> {
    activity.sort();
    activity
}

/// What Tributary's reader makes of `file`: its investment activity.
fn tributary_reads(file: &str) -> Result<Vec<Activity>, String> {
    let statements = parse(&testdata_bytes(file), Some(Format::Ofx)).map_err(|e| e.to_string())?;
    Ok(sorted(
        statements
            .iter()
            .flat_map(|s| &s.investment_transactions)
            .map(|a| {
                (
                    a.subtype.clone().unwrap(),
                    a.amount,
                    a.quantity.map(|q| q.abs()),
                )
            })
            .collect(),
    ))
}

#[test]
fn every_ofx_file_gives_the_investment_activity_ofxtools_finds() {
    let files = ofx_files();
    let reference = ofxtools_reads(&files);
    let mut compared = 0;
    let mut with_activity = 0;
    let mut differences = Vec::new();
    for (file, theirs) in &reference {
        let ours = tributary_reads(file);
        match (theirs, ours) {
            (Ok(theirs), Ok(ours)) => {
                if &ours != theirs {
                    differences.push(format!(
                        "{file}:\n  ours      {ours:?}\n  ofxtools' {theirs:?}"
                    ));
                }
                compared += 1;
                with_activity += usize::from(!theirs.is_empty());
            }
            // A file without statements (an account listing) is no
            // import here; ofxtools reads no activity in it either.
            (Ok(theirs), Err(_)) if theirs.is_empty() => compared += 1,
            (Ok(_), Err(why)) => differences.push(format!("{file}: ofxtools reads it, we: {why}")),
            (Err(why), _) => eprintln!(
                "{file}: ofxtools refuses it ({}); not compared",
                why.lines().next().unwrap_or_default()
            ),
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    // The shared data holds eight files with investment activity that
    // ofxtools reads (docs/imports.md lists them); fewer means the
    // comparison lost its subject.
    assert!(
        with_activity >= 8,
        "{with_activity} files with activity compared"
    );
    assert!(compared >= 20, "{compared} files compared");
}

/// A file in OFX 1 SGML whose `INVTRAN` is never closed (ofxtools reads
/// `SECID`, `UNITS` and `TOTAL` as inside it and refuses the file): the
/// tolerant reader closes it at its parent's end and reads each trade
/// whole, the sale's units negative.
#[test]
fn trades_with_an_unclosed_invtran_are_read_whole() {
    let statements = parse(
        &testdata_bytes("asgrim-ofxparser/fixtures/ofxdata-google.ofx"),
        Some(Format::Ofx),
    )
    .unwrap();
    let activity: Vec<_> = statements
        .iter()
        .flat_map(|s| &s.investment_transactions)
        .map(|a| {
            (
                a.kind.as_str(),
                a.security.as_ref().map(|s| s.name.as_str()),
                a.quantity.unwrap().to_string(),
                a.amount.to_string(),
            )
        })
        .collect();
    let telus = Some("TELUS Corporation");
    assert_eq!(
        activity,
        [
            ("BUY", telus, "5".to_owned(), "-100".to_owned()),
            ("BUY", telus, "20".to_owned(), "-700".to_owned()),
            ("SELL", telus, "-20".to_owned(), "841.2".to_owned()),
        ]
    );
}

/// Uploads `file` with `key`; the import's answer.
async fn upload(server: &TestServer, key: &str, file: &str) -> Value {
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(testdata_bytes(file)).file_name("statement.ofx"),
    );
    let response = Client::new()
        .post(server.url("/api/v1/imports"))
        .header("x-api-key", key)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{file}");
    response.json().await.unwrap()
}

async fn get(server: &TestServer, key: &str, path: &str) -> (StatusCode, Value) {
    let response = Client::new()
        .get(server.url(path))
        .header("x-api-key", key)
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

async fn account_ids(server: &TestServer, key: &str) -> HashSet<i64> {
    let (_, accounts) = get(server, key, "/api/v1/accounts").await;
    accounts["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_i64().unwrap())
        .collect()
}

#[actix_web::test]
async fn uploaded_activity_is_served_as_ofxtools_reads_it_and_again_unchanged() {
    const FILES: [&str; 2] = [
        "ofxparse/fixtures/fidelity.ofx",
        "asgrim-ofxparser/fixtures/ofxdata-investments-xml.ofx",
    ];
    let files: Vec<String> = FILES.iter().map(|f| f.to_string()).collect();
    let reference = ofxtools_reads(&files);
    on_every_backend(|server| {
        let reference = reference.clone();
        async move {
            let key = server.world.bob_key.clone();
            let mut served = Vec::new();
            for file in FILES {
                let before = account_ids(&server, &key).await;
                upload(&server, &key, file).await;
                let new: Vec<i64> = account_ids(&server, &key)
                    .await
                    .difference(&before)
                    .copied()
                    .collect();
                assert_eq!(new.len(), 1, "{file}: one investment account");
                let path = format!("/api/v1/accounts/{}/investment_transactions", new[0]);
                let (status, body) = get(&server, &key, &path).await;
                assert_eq!(status, StatusCode::OK, "{body}");
                let list = body["investmentTransactions"].as_array().unwrap();
                assert_eq!(body["total"].as_u64(), Some(list.len() as u64));
                let activity = sorted(
                    list.iter()
                        .map(|a| {
                            (
                                a["subtype"].as_str().unwrap().to_owned(),
                                a["amount"].to_string().parse().unwrap(),
                                a["quantity"]
                                    .as_number()
                                    .map(|q| q.to_string().parse::<Decimal>().unwrap().abs()),
                            )
                        })
                        .collect(),
                );
                assert_eq!(
                    Ok(&activity),
                    reference[file].as_ref(),
                    "{file}: served, then ofxtools'"
                );
                // Newest first, each of this account.
                let dates: Vec<&str> = list.iter().map(|a| a["date"].as_str().unwrap()).collect();
                assert!(dates.windows(2).all(|w| w[0] >= w[1]), "{dates:?}");
                assert!(list.iter().all(|a| a["accountId"] == new[0]));
                served.push((path, body));
            }

            // The fidelity file's activity, checked field by field.
            let (_, fidelity) = &served[0];
            let sale = fidelity["investmentTransactions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["type"] == "SELL")
                .unwrap();
            assert!(sale["quantity"].as_f64().unwrap() < 0.0, "{sale}");
            assert!(sale["amount"].as_f64().unwrap() > 0.0, "{sale}");
            assert!(sale["security"]["name"].is_string(), "{sale}");
            let dividend = fidelity["investmentTransactions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["type"] == "DIVIDEND")
                .unwrap();
            assert_eq!(dividend["subtype"], "INCOME");
            assert!(dividend["raw"]["INCOMETYPE"] == "DIV", "{dividend}");

            // Uploading again changes nothing.
            for file in FILES {
                upload(&server, &key, file).await;
            }
            for (path, body) in &served {
                assert_eq!(&get(&server, &key, path).await.1, body, "{path}");
            }

            // Dates filter; a bad one is named.
            let (path, body) = &served[0];
            let all = body["total"].as_u64().unwrap();
            let (_, july) = get(
                &server,
                &key,
                &format!("{path}?from=2012-07-01&to=2012-07-31"),
            )
            .await;
            let in_july = july["total"].as_u64().unwrap();
            assert!(in_july > 0 && in_july < all, "{in_july} of {all}");
            assert!(
                july["investmentTransactions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|a| a["date"].as_str().unwrap().starts_with("2012-07"))
            );
            let (status, error) = get(&server, &key, &format!("{path}?from=July")).await;
            assert_eq!(status, StatusCode::BAD_REQUEST);
            assert_eq!(error["code"], "INVALID_DATE");

            // Someone else's account is not found; a bank account's source
            // has no activity.
            let (status, error) = get(&server, &server.world.alice_key, path).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
            let (status, error) = get(
                &server,
                &server.world.alice_key,
                &format!(
                    "/api/v1/accounts/{}/investment_transactions",
                    server.world.alice_imported
                ),
            )
            .await;
            assert_eq!(status, StatusCode::NOT_IMPLEMENTED, "{error}");
            assert_eq!(error["code"], "INVESTMENTS_NOT_SUPPORTED");
            server
        }
    })
    .await;
}

/// Reads `GET /investment_transactions/sync` with `key` from `cursor` to
/// its end, `count` a page, into `copy` (by id); returns the last cursor
/// and every change met as (`added`|`modified`|`removed`, id).
async fn follow_feed(
    server: &TestServer,
    key: &str,
    mut cursor: Option<String>,
    copy: &mut BTreeMap<String, Value>,
) -> (String, Vec<(&'static str, String)>) {
    let mut met = Vec::new();
    loop {
        let path = match &cursor {
            Some(cursor) => format!("/api/v1/investment_transactions/sync?count=2&cursor={cursor}"),
            None => "/api/v1/investment_transactions/sync?count=2".to_owned(),
        };
        let (status, page) = get(server, key, &path).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        for (what, list) in [("added", "added"), ("modified", "modified")] {
            for record in page[list].as_array().unwrap() {
                let id = record["id"].as_str().unwrap().to_owned();
                met.push((what, id.clone()));
                copy.insert(id, record.clone());
            }
        }
        for removed in page["removed"].as_array().unwrap() {
            let id = removed["id"].as_str().unwrap().to_owned();
            met.push(("removed", id.clone()));
            copy.remove(&id);
        }
        cursor = Some(page["next_cursor"].as_str().unwrap().to_owned());
        if page["has_more"] != true {
            return (cursor.unwrap(), met);
        }
    }
}

/// Every investment transaction `key` is served by the listings, by id.
async fn listed(server: &TestServer, key: &str) -> BTreeMap<String, Value> {
    let mut all = BTreeMap::new();
    for account in account_ids(server, key).await {
        let path = format!("/api/v1/accounts/{account}/investment_transactions");
        let (status, body) = get(server, key, &path).await;
        if status == StatusCode::NOT_IMPLEMENTED {
            continue;
        }
        assert_eq!(status, StatusCode::OK, "{body}");
        for record in body["investmentTransactions"].as_array().unwrap() {
            all.insert(record["id"].as_str().unwrap().to_owned(), record.clone());
        }
    }
    all
}

#[actix_web::test]
async fn the_activity_feed_keeps_a_copy_of_what_the_listings_serve() {
    on_every_backend(|server| async move {
        let key = server.world.bob_key.clone();
        let mut copy = BTreeMap::new();
        let (start, _) = follow_feed(&server, &key, None, &mut copy).await;
        assert_eq!(copy, listed(&server, &key).await);

        let answer = upload(&server, &key, "ofxparse/fixtures/fidelity.ofx").await;
        let (after_upload, met) = follow_feed(&server, &key, Some(start), &mut copy).await;
        assert!(
            !met.is_empty() && met.iter().all(|(what, _)| *what == "added"),
            "{met:?}"
        );
        // The import's answer counts them.
        assert_eq!(
            answer["investment_transactions"],
            serde_json::json!({"added": met.len(), "updated": 0}),
            "{answer}"
        );
        // Field for field what the listings serve.
        assert_eq!(copy, listed(&server, &key).await);

        // The same file again: nothing, and the cursor stays.
        let answer = upload(&server, &key, "ofxparse/fixtures/fidelity.ofx").await;
        assert!(answer.get("investment_transactions").is_none(), "{answer}");
        let (again, met) = follow_feed(&server, &key, Some(after_upload.clone()), &mut copy).await;
        assert_eq!((again.as_str(), met.len()), (after_upload.as_str(), 0));

        // A cursor of the transactions' feed, or of another user, is not
        // one of this feed; something else is not a cursor at all.
        let (_, transactions) = get(&server, &key, "/api/v1/transactions/sync?count=1").await;
        let theirs = transactions["next_cursor"].as_str().unwrap();
        for (who, cursor, code) in [
            (&key, theirs, "RESYNC_REQUIRED"),
            (
                &server.world.alice_key,
                after_upload.as_str(),
                "RESYNC_REQUIRED",
            ),
            (&key, "not-a-cursor", "INVALID_CURSOR"),
        ] {
            let (status, error) = get(
                &server,
                who,
                &format!("/api/v1/investment_transactions/sync?cursor={cursor}"),
            )
            .await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
            assert_eq!(error["code"], code, "{error}");
        }

        // The import's connection removed: its activity is removed from
        // the copy, and the copy is again what is listed.
        let imported = {
            let conn = &mut *server.database.db().conn().unwrap();
            let connection =
                tributary_storage::connections::list_connections(conn, Some(server.world.bob_user))
                    .unwrap()
                    .into_iter()
                    .find(|c| c.id != server.world.bob_connection)
                    .unwrap();
            let now = chrono::Utc::now().naive_utc();
            tributary_storage::connections::delete_connection(
                conn,
                server.world.bob_user,
                connection.id,
                now,
            )
            .unwrap()
        };
        assert!(imported);
        let before = copy.len();
        let (_, met) = follow_feed(&server, &key, Some(after_upload), &mut copy).await;
        assert!(met.iter().all(|(what, _)| *what == "removed"), "{met:?}");
        assert!(
            copy.len() < before && met.len() == before - copy.len(),
            "{met:?}"
        );
        assert_eq!(copy, listed(&server, &key).await);
        server
    })
    .await;
}
