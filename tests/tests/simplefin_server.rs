//! Tributary as a SimpleFIN server, end to end on both backends: setup
//! tokens claimed once, the Account Set in both protocol versions and with
//! every parameter, scoped destinations, revocation, the daily budget, and
//! Tributary's own SimpleFIN connector reading another Tributary. The
//! third-party client (Home Assistant's simplefin4py) runs in
//! `simplefin_client.rs`.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use reqwest::{Client, StatusCode};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tributary_auth::keyring::{Keyring, generate_key};
use tributary_domain::access::Viewer;
use tributary_domain::clock::Clock;
use tributary_domain::ids::AccountId;
use tributary_domain::model::SyncJobKind;
use tributary_e2e::harness::personal as on_every_backend;
use tributary_e2e::simplefin::{
    accounts, assert_exact_amounts, claim, claim_url, create_page, epoch, post_the_pending_bakery,
    revoke_all, setup_token,
};
use tributary_e2e::{EXACT_AMOUNTS, TestServer};
use tributary_providers::Registry;
use tributary_providers::connector::ConnectRequest;
use tributary_providers::simplefin::SimpleFinConnector;
use tributary_providers::sync::SyncEngine;
use tributary_storage::read::{self, TransactionFilter};
use tributary_storage::testing::{TestDatabase, dump};
use tributary_storage::users;

/// Sets the status of the connection behind `account`, as a failed sync
/// would.
fn set_connection_status(server: &TestServer, account: AccountId, status: &str) {
    use diesel::prelude::*;
    use tributary_storage::schema::{accounts, connections};
    let conn = &mut *server.database.db().conn().unwrap();
    let connection: i64 = accounts::table
        .find(account.get())
        .select(accounts::connection_id)
        .first(conn)
        .unwrap();
    diesel::update(connections::table.find(connection))
        .set((
            connections::status.eq(status),
            connections::status_reason.eq("the bank said no"),
        ))
        .execute(conn)
        .unwrap();
}

fn ids(set: &Value) -> Vec<String> {
    set["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_owned())
        .collect()
}

fn account(set: &Value, id: AccountId) -> &Value {
    let wanted = format!("ACT-{id}");
    set["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == wanted.as_str())
        .unwrap_or_else(|| panic!("{wanted} in {set}"))
}

#[actix_web::test]
async fn a_setup_token_claims_once_and_its_access_url_reads_the_account_set() {
    on_every_backend(|server| async move {
        // The protocol's `GET /create` says how a person makes a token here.
        assert!(
            create_page(&server.url("/simplefin/create"))
                .await
                .contains("tributary simplefin create")
        );
        let token = setup_token(&server, None);
        let (status, access_url) = claim(&token).await;
        assert_eq!(status, StatusCode::OK, "{access_url}");
        assert!(access_url.starts_with("http://sfu_"), "{access_url}");
        assert!(access_url.ends_with("/simplefin"), "{access_url}");
        let (again, _) = claim(&token).await;
        assert_eq!(again, StatusCode::FORBIDDEN, "a token claims once");

        // Only hashes are stored: neither the claim token nor the Access
        // URL's password is anywhere in the database.
        let password = url::Url::parse(&access_url)
            .unwrap()
            .password()
            .unwrap()
            .to_owned();
        let claim_token = claim_url(&token).rsplit('/').next().unwrap().to_owned();
        let everything = dump(server.database.db());
        assert!(
            !everything.contains(&password),
            "password stored in plain text"
        );
        assert!(
            !everything.contains(&claim_token),
            "claim token stored in plain text"
        );

        // Version 1: every account of alice with its org; exact amounts.
        let (status, set) = accounts(&access_url, "").await;
        assert_eq!(status, StatusCode::OK, "{set}");
        let world = &server.world;
        assert_eq!(
            ids(&set).len(),
            world.alice_sandbox_accounts.len() + 1,
            "{set}"
        );
        assert!(
            set["errors"].is_array() && set.get("errlist").is_none(),
            "{set}"
        );
        let giro = account(&set, world.alice_imported);
        assert_eq!(giro["org"]["name"], "Credit Union");
        assert!(
            giro["org"]["sfin-url"]
                .as_str()
                .unwrap()
                .ends_with("/simplefin")
        );
        assert_eq!(giro["currency"], "EUR");
        assert_eq!(giro["balance"], "1000.50");
        let posted = giro["transactions"].as_array().unwrap();
        assert_exact_amounts(posted);
        assert_eq!(posted[0]["posted"], epoch("2026-11-01"));
        assert!(
            posted.iter().all(|t| t["pending"] == false),
            "no pending without pending=1"
        );
        // Bob's data is nowhere.
        assert!(
            !set.to_string()
                .contains(&format!("ACT-{}\"", world.bob_account))
        );

        // Pending on request; then it posts, and keeps its SimpleFIN id.
        let (_, with_pending) = accounts(&access_url, "pending=1").await;
        let pending = account(&with_pending, world.alice_imported)["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["pending"] == true)
            .unwrap()
            .clone();
        assert_eq!(pending["payee"], "Bakery");
        post_the_pending_bakery(&server);
        let (_, after) = accounts(&access_url, "pending=1").await;
        let now_posted: Vec<&Value> = account(&after, world.alice_imported)["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["payee"] == "Bakery")
            .collect();
        assert_eq!(now_posted.len(), 1, "posted without a duplicate: {after}");
        assert_eq!(now_posted[0]["id"], pending["id"]);
        assert_eq!(now_posted[0]["pending"], false);
        assert_eq!(now_posted[0]["amount"], "-42.10");

        // Version 2: connections, conn_id, errlist.
        let (_, v2) = accounts(&access_url, "version=2").await;
        assert!(v2["errlist"].is_array(), "{v2}");
        let connections = v2["connections"].as_array().unwrap();
        assert_eq!(connections.len(), 2, "{v2}");
        let giro = account(&v2, world.alice_imported);
        assert!(giro.get("org").is_none());
        assert!(
            connections.iter().any(|c| c["conn_id"] == giro["conn_id"]),
            "{v2}"
        );

        // A connection that needs sign-in is `con.auth`; one whose update
        // failed is `act.failed` for each of its accounts; their accounts
        // still list what is stored.
        let sandbox_account = world.alice_sandbox_accounts[0];
        set_connection_status(&server, sandbox_account, "REAUTH_REQUIRED");
        set_connection_status(&server, world.alice_imported, "ERROR");
        let (_, troubled) = accounts(&access_url, "version=2").await;
        let errlist = troubled["errlist"].as_array().unwrap();
        let sandbox_conn = &account(&troubled, sandbox_account)["conn_id"];
        assert!(
            errlist
                .iter()
                .any(|e| e["code"] == "con.auth" && &e["conn_id"] == sandbox_conn),
            "{troubled}"
        );
        let failed: Vec<&Value> = errlist
            .iter()
            .filter(|e| e["code"] == "act.failed")
            .collect();
        assert_eq!(failed.len(), 1, "{troubled}");
        assert_eq!(
            failed[0]["account_id"],
            format!("ACT-{}", world.alice_imported)
        );
        assert!(
            failed[0]["msg"].as_str().unwrap().contains("Credit Union")
                && failed[0]["message"] == failed[0]["msg"],
            "{troubled}"
        );
        assert_eq!(
            account(&troubled, world.alice_imported)["transactions"]
                .as_array()
                .unwrap()
                .len(),
            EXACT_AMOUNTS.len() + 1,
            "stored data is still listed"
        );
        let (_, troubled_v1) = accounts(&access_url, "").await;
        assert!(
            troubled_v1["errors"]
                .as_array()
                .unwrap()
                .contains(&Value::from(
                    "Connection to Credit Union may need attention"
                )),
            "{troubled_v1}"
        );

        // balances-only, account=, and a date window (end exclusive).
        let (_, balances) = accounts(&access_url, "balances-only=1").await;
        assert!(
            balances["accounts"]
                .as_array()
                .unwrap()
                .iter()
                .all(|a| a["transactions"].as_array().unwrap().is_empty()
                    && a["balance"].is_string()),
            "{balances}"
        );
        let (_, one) = accounts(
            &access_url,
            &format!(
                "account=ACT-{}&account=ACT-{}",
                world.alice_imported, world.bob_account
            ),
        )
        .await;
        assert_eq!(
            ids(&one),
            [format!("ACT-{}", world.alice_imported)],
            "{one}"
        );
        let (_, window) = accounts(
            &access_url,
            &format!(
                "account=ACT-{}&start-date={}&end-date={}",
                world.alice_imported,
                epoch("2026-11-02"),
                epoch("2026-11-03")
            ),
        )
        .await;
        let in_window = account(&window, world.alice_imported)["transactions"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(in_window.len(), 1, "{window}");
        assert_eq!(in_window[0]["posted"], epoch("2026-11-02"));

        // Malformed parameters are named; a start however far back is
        // honoured (no cap is configured), without a warning.
        let (status, bad) = accounts(&access_url, "start-date=yesterday").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(
            bad["errors"][0].as_str().unwrap().contains("start-date"),
            "{bad}"
        );
        let (status, uncapped) = accounts(&access_url, "start-date=0&version=2").await;
        assert_eq!(status, StatusCode::OK);
        assert!(!uncapped.to_string().contains("capped"), "{uncapped}");

        // Revoked: 403, and the data stays where it is.
        revoke_all(&server);
        let (status, _) = accounts(&access_url, "").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        server
    })
    .await;
}

#[actix_web::test]
async fn a_destination_scoped_to_two_accounts_never_reveals_a_third() {
    on_every_backend(|server| async move {
        let world = &server.world;
        let scope = [world.alice_imported, world.alice_sandbox_accounts[0]];
        let hidden: Vec<AccountId> = world
            .alice_sandbox_accounts
            .iter()
            .skip(1)
            .copied()
            .collect();
        let (_, access_url) = claim(&setup_token(&server, Some(&scope))).await;
        let hidden_names: Vec<String> = {
            let conn = &mut *server.database.db().conn().unwrap();
            let alice = users::find_personal_user(conn, "alice@example.com")
                .unwrap()
                .unwrap()
                .id;
            read::list_accounts(conn, &Viewer::whole_user(alice))
                .unwrap()
                .into_iter()
                .filter(|a| hidden.contains(&a.id))
                .map(|a| a.name)
                .collect()
        };
        let asking_for_hidden: String = hidden
            .iter()
            .map(|id| format!("&account=ACT-{id}"))
            .collect();
        for query in [
            "pending=1".to_owned(),
            "version=2&pending=1".to_owned(),
            format!("version=2{asking_for_hidden}"),
            format!("balances-only=1{asking_for_hidden}"),
        ] {
            let (status, set) = accounts(&access_url, &query).await;
            assert_eq!(status, StatusCode::OK, "{query}: {set}");
            let text = set.to_string();
            for id in &hidden {
                assert!(!text.contains(&format!("ACT-{id}\"")), "{query}: {text}");
            }
            // (A visible account may name a hidden one in its own
            // transactions' texts, "Transfer to …": that is its data.)
            for listed in set["accounts"].as_array().unwrap() {
                assert!(
                    !hidden_names.iter().any(|n| listed["name"] == n.as_str()),
                    "{query}: {listed}"
                );
            }
            for id in ids(&set) {
                assert!(
                    scope.iter().any(|s| id == format!("ACT-{s}")),
                    "{query}: {id}"
                );
            }
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn concurrent_claims_of_one_token_yield_one_access_url() {
    on_every_backend(|server| async move {
        let token = setup_token(&server, None);
        let claims: Vec<_> = (0..8).map(|_| claim(&token)).collect();
        let answers = futures_util::future::join_all(claims).await;
        let won: Vec<_> = answers
            .iter()
            .filter(|(status, _)| *status == StatusCode::OK)
            .collect();
        assert_eq!(won.len(), 1, "{answers:?}");
        assert!(
            answers
                .iter()
                .all(|(status, _)| *status == StatusCode::OK || *status == StatusCode::FORBIDDEN),
            "{answers:?}"
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn the_daily_budget_answers_429_with_the_wait_and_counts_per_destination() {
    on_every_backend(|server| async move {
        let (_, first) = claim(&setup_token(&server, None)).await;
        let (_, second) = claim(&setup_token(&server, None)).await;
        let budget = tributary_app::config::DEFAULT_SIMPLEFIN_DAILY_REQUESTS;
        for _ in 0..budget {
            assert_eq!(accounts(&first, "balances-only=1").await.0, StatusCode::OK);
        }
        let url = url::Url::parse(&first).unwrap();
        let response = Client::new()
            .get(server.url("/simplefin/accounts"))
            .basic_auth(url.username(), url.password())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        let wait: u64 = response.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            wait,
            12 * 3600,
            "until the next UTC day (the clock is at noon)"
        );
        let body: Value = response.json().await.unwrap();
        assert!(
            body["errors"][0]
                .as_str()
                .unwrap()
                .contains(&format!("try again in {wait} seconds")),
            "{body}"
        );
        assert_eq!(accounts(&second, "balances-only=1").await.0, StatusCode::OK);
        // A new day, a whole budget.
        server.clock.advance(chrono::Duration::hours(12));
        assert_eq!(accounts(&first, "balances-only=1").await.0, StatusCode::OK);
        server
    })
    .await;
}

/// One Tributary reads another: the SimpleFIN connector claims a setup
/// token of this server, and a sync through it stores the source's
/// transactions, the same amounts, dates, texts and states.
#[actix_web::test]
async fn tributarys_simplefin_connector_syncs_from_another_tributary() {
    on_every_backend(|server| async move {
        let token = setup_token(&server, None);
        let source = server.database.db().clone();
        let clock = server.clock.clone();
        let alice_accounts: Vec<AccountId> = server
            .world
            .alice_sandbox_accounts
            .iter()
            .copied()
            .chain([server.world.alice_imported])
            .collect();
        // Blocking HTTP clients: made, used and dropped on a blocking
        // thread, while the server goes on answering on this runtime.
        let (copied, original) = actix_web::rt::task::spawn_blocking(move || {
            let target = TestDatabase::sqlite();
            let mut registry = Registry::default();
            registry.register(Arc::new(
                SimpleFinConnector::new(
                    Duration::from_secs(30),
                    &tributary_outbound::Guard::new(tributary_outbound::PrivateAllowance::All),
                )
                .unwrap(),
            ));
            let keyring = Arc::new(Keyring::new(&generate_key(), &[]).unwrap());
            let engine =
                SyncEngine::new(target.db().clone(), registry, clock.clone()).with_sealer(keyring);
            let reader = users::create_personal_user(
                &mut target.db().conn().unwrap(),
                "reader@example.com",
                clock.now().naive_utc(),
            )
            .unwrap()
            .id;
            let request = ConnectRequest {
                settings: serde_json::json!({}),
                secret: Some(token),
            };
            let connection = engine
                .connect(reader, tributary_providers::simplefin::PROVIDER, &request)
                .unwrap();
            engine
                .sync_now(connection.id, SyncJobKind::Initial, "e2e")
                .unwrap();
            // The connector asks for 90 days before now, from the first whole day.
            let from =
                (clock.now() - chrono::Duration::days(90)).date_naive() + chrono::Days::new(1);
            let filter = TransactionFilter {
                include_pending: true,
                from: Some(from),
                to: None,
            };
            // Each account keyed by its name and its bank: the copy keeps
            // both (SimpleFIN's org).
            let rows = |db: &tributary_storage::Database, viewer: Viewer| {
                let conn = &mut *db.conn().unwrap();
                let mut by_name = BTreeMap::new();
                for account in read::list_accounts(conn, &viewer).unwrap() {
                    let mut rows: Vec<String> =
                        read::list_transactions(conn, account.id, &filter, None, None)
                            .unwrap()
                            .into_iter()
                            .map(|t| {
                                // Records with a payee and no text travel with the
                                // payee as their description (docs/simplefin.md).
                                let description = t.description.or(t.merchant.clone());
                                // The payee is the clean merchant, which the
                                // copy cleans to itself (docs/enrichment.md).
                                format!(
                                    "{} {} {} {:?} {:?} {:?} {}",
                                    t.date,
                                    t.amount.normalize(),
                                    t.currency,
                                    t.clean_merchant,
                                    t.subcategory,
                                    description,
                                    t.is_pending
                                )
                            })
                            .collect();
                    rows.sort();
                    by_name.insert(
                        format!("{} ({})", account.name, account.institution_name),
                        rows,
                    );
                }
                by_name
            };
            let copied = rows(target.db(), Viewer::whole_user(reader));
            let alice = Viewer {
                user_id: users::find_personal_user(
                    &mut source.conn().unwrap(),
                    "alice@example.com",
                )
                .unwrap()
                .unwrap()
                .id,
                account_scope: Some(alice_accounts),
            };
            (copied, rows(&source, alice))
        })
        .await
        .unwrap();
        assert_eq!(
            copied.keys().collect::<Vec<_>>(),
            original.keys().collect::<Vec<_>>()
        );
        assert!(original.values().map(Vec::len).sum::<usize>() > 10);
        assert_eq!(copied, original);
        server
    })
    .await;
}

/// The protocol requires every account's balance and its date. An account
/// no balance was stated for (a CSV statement) answers the sum of its
/// posted transactions as of the newest one's day, never zero in 1970.
#[actix_web::test]
async fn an_account_without_a_stated_balance_answers_what_its_transactions_add_up_to() {
    on_every_backend(|server| async move {
        let csv = "Date,Description,Amount\n2026-01-05,Coffee,-3.50\n2026-01-06,Salary,2500.00\n2026-01-07,Rent,-800.25\n";
        let form = reqwest::multipart::Form::new().part(
            "files",
            reqwest::multipart::Part::bytes(csv.as_bytes().to_vec()).file_name("export.csv"),
        );
        let imported = Client::new()
            .post(server.url("/api/v1/imports"))
            .header("x-api-key", &server.world.alice_key)
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(imported.status(), StatusCode::OK);
        let (_, access_url) = claim(&setup_token(&server, None)).await;
        let (status, set) = accounts(&access_url, "version=2").await;
        assert_eq!(status, StatusCode::OK, "{set}");
        let all = set["accounts"].as_array().unwrap();
        let csv_account = all
            .iter()
            .find(|a| a["name"] == "Imported EUR account (CSV: Date, Description, Amount)")
            .unwrap_or_else(|| panic!("the CSV account in {set}"));
        assert_eq!(csv_account["balance"], "1696.25");
        assert_eq!(csv_account["balance-date"], epoch("2026-01-07"));
        for account in all {
            assert!(
                account["balance-date"].as_i64().unwrap() > epoch("2000-01-01"),
                "{account}"
            );
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn the_operators_window_cap_moves_an_old_start_date_up_and_warns() {
    for database in TestDatabase::all() {
        eprintln!("-- on {:?}", database.backend());
        let server = tributary_e2e::start_configured(database, Vec::new(), |config| {
            config.simplefin_max_window_days = Some(30);
        });
        let (_, access_url) = claim(&setup_token(&server, None)).await;
        let giro = server.world.alice_imported;
        // The imported account's rows are dated 2026-11-01 to 11-03; the
        // server's today is within 30 days of them.
        let (status, capped) = accounts(
            &access_url,
            &format!("start-date=0&version=2&account=ACT-{giro}"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{capped}");
        let warning = capped["errlist"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["code"] == "gen.api")
            .unwrap_or_else(|| panic!("{capped}"));
        let today = server.clock.now().date_naive();
        let from = today - chrono::Days::new(30);
        assert_eq!(
            warning["msg"],
            format!(
                "Requested date range exceeds 30 days and was capped: transactions from {from} on."
            ),
            "{capped}"
        );
        assert!(
            !account(&capped, giro)["transactions"]
                .as_array()
                .unwrap()
                .is_empty(),
            "{capped}"
        );
        server.stop().await;
    }
}

#[actix_web::test]
async fn investment_activity_rides_in_its_accounts_extra() {
    on_every_backend(|server| async move {
        let (_, access_url) = claim(&setup_token(&server, None)).await;
        let from = server.clock.now().date_naive() - chrono::Days::new(60);
        let (status, set) = accounts(
            &access_url,
            &format!("start-date={}", epoch(&from.to_string())),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{set}");
        let mut with_activity = 0;
        for id in &server.world.alice_sandbox_accounts {
            let listing = Client::new()
                .get(server.url(&format!(
                    "/api/v1/accounts/{id}/investment_transactions?from={from}"
                )))
                .header("x-api-key", &server.world.alice_key)
                .send()
                .await
                .unwrap();
            let status = listing.status();
            let listing: Value = listing.json().await.unwrap();
            let extra = &account(&set, *id)["extra"];
            if status == StatusCode::NOT_IMPLEMENTED {
                assert!(extra.is_null(), "{extra}");
                continue;
            }
            // The same records, in the protocol's terms: `INV-` ids,
            // oldest first, exact amounts.
            let mut served: Vec<(String, String, String, String)> =
                listing["investmentTransactions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| {
                        (
                            format!("INV-{}", a["id"].as_str().unwrap()),
                            a["type"].as_str().unwrap().to_owned(),
                            a["amount"].to_string(),
                            a["currency"].as_str().unwrap().to_owned(),
                        )
                    })
                    .collect();
            served.reverse();
            if served.is_empty() {
                assert!(extra.is_null(), "{extra}");
                continue;
            }
            with_activity += 1;
            let carried: Vec<(String, String, String, String)> = extra["investment_transactions"]
                .as_array()
                .unwrap_or_else(|| panic!("{extra}"))
                .iter()
                .map(|a| {
                    (
                        a["id"].as_str().unwrap().to_owned(),
                        a["type"].as_str().unwrap().to_owned(),
                        a["amount"]
                            .as_str()
                            .unwrap()
                            .parse::<f64>()
                            .unwrap()
                            .to_string(),
                        a["currency"].as_str().unwrap().to_owned(),
                    )
                })
                .collect();
            let served: Vec<(String, String, String, String)> = served
                .into_iter()
                .map(|(id, kind, amount, currency)| {
                    (
                        id,
                        kind,
                        amount.parse::<f64>().unwrap().to_string(),
                        currency,
                    )
                })
                .collect();
            assert_eq!(carried, served);
            let posted: Vec<i64> = extra["investment_transactions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["posted"].as_i64().unwrap())
                .collect();
            assert!(posted.windows(2).all(|w| w[0] <= w[1]), "{posted:?}");
        }
        assert!(
            with_activity > 0,
            "the sandbox's brokerage has activity: {set}"
        );

        // Balances only: no activity either.
        let (_, balances) = accounts(&access_url, "balances-only=1").await;
        assert!(
            balances["accounts"]
                .as_array()
                .unwrap()
                .iter()
                .all(|a| a.get("extra").is_none()),
            "{balances}"
        );
        server
    })
    .await;
}
