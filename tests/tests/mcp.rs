//! The MCP server at `/mcp` end to end, on both backends: a third-party MCP
//! client (the MCP Inspector's CLI, from npm) lists the tools and calls
//! each one, and every answer agrees with what the REST API answers to the
//! same question; a key scoped to two accounts never sees a third through
//! any tool or argument; malformed messages, unknown tools and oversized
//! arguments are protocol errors; each credential's request limit holds.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use tributary_domain::clock::Clock as _;
use tributary_e2e::TestServer;
use tributary_e2e::harness::personal as on_every_backend;
use tributary_e2e::mcp::Inspector;
use tributary_storage::testing::TestDatabase;

const TOOLS: [&str; 8] = [
    "list_accounts",
    "get_transactions",
    "get_balance_history",
    "get_holdings",
    "get_investment_transactions",
    "spending_summary",
    "list_recurring",
    "get_changes",
];

fn inspector() -> Inspector {
    Inspector::installed(&std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-inspector"))
}

async fn rest(server: &TestServer, key: &str, path: &str) -> Value {
    let response = Client::new()
        .get(server.url(&format!("/api/v1{path}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.json().await.unwrap()
}

/// A JSON-RPC request to `/mcp`, as an MCP client sends it.
async fn rpc(server: &TestServer, key: &str, body: &str) -> (StatusCode, Value) {
    let response = Client::new()
        .post(server.url("/mcp"))
        .bearer_auth(key)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// `tools/call` over plain HTTP: the JSON-RPC answer.
async fn call(server: &TestServer, key: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    });
    let (status, answer) = rpc(server, key, &body.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{tool}: {answer}");
    answer
}

/// A number of the REST API (exact digits) as the text MCP answers.
fn digits(value: &Value) -> String {
    match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        other => panic!("not an amount: {other}"),
    }
}

/// Every transaction of `account_id` through MCP, page after page.
async fn mcp_transactions(
    inspector: &Inspector,
    url: &str,
    key: &str,
    mut arguments: Value,
) -> Vec<Value> {
    let mut all = Vec::new();
    loop {
        let page = inspector
            .answer(url, key, "get_transactions", &arguments)
            .await;
        all.extend(page["transactions"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(cursor) => arguments["cursor"] = json!(cursor),
            None => return all,
        }
    }
}

/// Each transaction's id and exact amount, in order (MCP writes amounts
/// as strings, REST as numbers: the same digits).
fn ids_and_amounts(rows: &[Value]) -> Vec<(String, String)> {
    rows.iter()
        .map(|t| (t["id"].as_str().unwrap().to_owned(), digits(&t["amount"])))
        .collect()
}

#[actix_web::test]
async fn the_inspector_calls_every_tool_and_each_agrees_with_the_rest_api() {
    let inspector = inspector();
    on_every_backend(|server: TestServer| {
        let inspector = inspector.clone();
        async move {
            let world = &server.world;
            let key = world.alice_key.as_str();
            let url = server.url("/mcp");

            // tools/list: the seven tools, each read-only with both schemas.
            let listed = inspector.list_tools(&url, key).await;
            assert_eq!(listed.exit, 0, "{}", listed.stderr);
            let tools = listed.result["tools"].as_array().unwrap();
            let names: BTreeSet<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
            assert_eq!(names, TOOLS.into_iter().collect());
            for tool in tools {
                assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
                assert_eq!(tool["annotations"]["destructiveHint"], false, "{tool}");
                assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
                assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
            }

            // list_accounts: the accounts and balances REST answers.
            let accounts = inspector
                .answer(&url, key, "list_accounts", &json!({}))
                .await;
            let rest_accounts = rest(&server, key, "/accounts").await;
            let ids = |list: &Value| -> Vec<i64> {
                list["accounts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a["id"].as_i64().unwrap())
                    .collect()
            };
            assert_eq!(ids(&accounts), ids(&rest_accounts));
            assert_eq!(accounts["total"], rest_accounts["total"]);
            // A card's terms, as REST states them (the sandbox card has them).
            let mut with_terms = 0;
            for (account, listed) in accounts["accounts"]
                .as_array()
                .unwrap()
                .iter()
                .zip(rest_accounts["accounts"].as_array().unwrap())
            {
                let terms = &listed["liability"];
                if terms.is_null() {
                    assert!(account.get("liability").is_none(), "{account}");
                    continue;
                }
                with_terms += 1;
                assert_eq!(
                    account["liability"]["credit_limit"],
                    digits(&terms["creditLimit"]),
                    "{account}"
                );
                assert_eq!(
                    account["liability"]["next_payment_due"], terms["nextPaymentDueDate"],
                    "{account}"
                );
            }
            assert!(with_terms > 0, "{rest_accounts}");
            for account in accounts["accounts"].as_array().unwrap() {
                let id = account["id"].as_i64().unwrap();
                let balance = rest(&server, key, &format!("/accounts/{id}/balance")).await;
                assert_eq!(
                    account["balance"]["current"],
                    digits(&balance["balance"]["amount"])
                );
                assert_eq!(account["currency"], balance["balance"]["currency"]);
                // get_balance_history: the account's newest point is that balance.
                let history = inspector
                    .answer(
                        &url,
                        key,
                        "get_balance_history",
                        &json!({"account_id": id, "interval": "daily"}),
                    )
                    .await;
                let points = history["series"][0]["points"].as_array().unwrap();
                assert_eq!(
                    points.last().unwrap()["balance"],
                    account["balance"]["current"],
                    "{history}"
                );
            }

            // get_transactions: one account, pending too, page by page.
            for account in [world.alice_imported, world.alice_sandbox_accounts[0]] {
                let rest_rows = rest(
                    &server,
                    key,
                    &format!("/accounts/{account}/transactions?include_pending=true"),
                )
                .await;
                let rest_rows = rest_rows["transactions"].as_array().unwrap();
                let mcp_rows = mcp_transactions(
                    &inspector,
                    &url,
                    key,
                    json!({"account_id": account.get(), "include_pending": true, "limit": 100}),
                )
                .await;
                assert_eq!(
                    ids_and_amounts(&mcp_rows),
                    ids_and_amounts(rest_rows),
                    "account {account}"
                );
            }

            // Every account at once, posted only, with each filter: the rows
            // REST lists, filtered the same way.
            let mut rest_all = Vec::new();
            for id in ids(&rest_accounts) {
                let rows = rest(&server, key, &format!("/accounts/{id}/transactions")).await;
                rest_all.extend(rows["transactions"].as_array().unwrap().iter().cloned());
            }
            let newest_first = |rows: &mut Vec<Value>| {
                rows.sort_by_key(|t| {
                    std::cmp::Reverse((
                        t["date"].as_str().unwrap().to_owned(),
                        t["id"].as_str().unwrap().parse::<i64>().unwrap(),
                    ))
                })
            };
            newest_first(&mut rest_all);
            let every = mcp_transactions(&inspector, &url, key, json!({"limit": 100})).await;
            assert_eq!(ids_and_amounts(&every), ids_and_amounts(&rest_all));
            let category = rest_all
                .iter()
                .find_map(|t| t["category"].as_str().filter(|c| *c != "Transfer"))
                .unwrap()
                .to_owned();
            let mut checks = 0;
            for (arguments, keep) in [
                (
                    json!({"text": "EXACT amount"}),
                    Box::new(|t: &Value| {
                        t["description"]
                            .as_str()
                            .is_some_and(|d| d.to_lowercase().contains("exact amount"))
                    }) as Box<dyn Fn(&Value) -> bool>,
                ),
                (
                    json!({"category": category}),
                    Box::new(move |t: &Value| t["category"].as_str() == Some(category.as_str())),
                ),
                (
                    json!({"max_amount": -100}),
                    Box::new(|t: &Value| digits(&t["amount"]).parse::<f64>().unwrap() <= -100.0),
                ),
                (
                    json!({"min_amount": "0.01", "from": "2026-11-01"}),
                    Box::new(|t: &Value| {
                        digits(&t["amount"]).parse::<f64>().unwrap() >= 0.01
                            && t["date"].as_str().unwrap() >= "2026-11-01"
                    }),
                ),
            ] {
                let mut arguments = arguments;
                arguments["limit"] = json!(100);
                let found = mcp_transactions(&inspector, &url, key, arguments.clone()).await;
                let expected: Vec<Value> = rest_all.iter().filter(|t| keep(t)).cloned().collect();
                assert!(!expected.is_empty(), "{arguments} matches something");
                assert_eq!(
                    ids_and_amounts(&found),
                    ids_and_amounts(&expected),
                    "{arguments}"
                );
                checks += 1;
            }
            assert_eq!(checks, 4);

            // get_holdings: the brokerage's positions and total.
            let brokerage = world.alice_brokerage;
            let holdings = inspector
                .answer(
                    &url,
                    key,
                    "get_holdings",
                    &json!({"account_id": brokerage.get()}),
                )
                .await;
            let rest_holdings =
                rest(&server, key, &format!("/accounts/{brokerage}/holdings")).await;
            assert_eq!(
                holdings["accounts"][0]["total_value"],
                digits(&rest_holdings["totalValue"])
            );
            assert_eq!(
                holdings["accounts"][0]["holdings"]
                    .as_array()
                    .unwrap()
                    .len(),
                rest_holdings["holdings"].as_array().unwrap().len()
            );

            // get_investment_transactions: the brokerage's activity, as
            // GET /accounts/{id}/investment_transactions lists it.
            let activity = inspector
                .answer(
                    &url,
                    key,
                    "get_investment_transactions",
                    &json!({"account_id": brokerage.get()}),
                )
                .await;
            let rest_activity = rest(
                &server,
                key,
                &format!("/accounts/{brokerage}/investment_transactions"),
            )
            .await;
            let listed = |list: &Value,
                          amount: &dyn Fn(&Value) -> String|
             -> Vec<(String, String, String)> {
                list.as_array()
                    .unwrap()
                    .iter()
                    .map(|a| {
                        (
                            a["date"].as_str().unwrap().to_owned(),
                            a["type"].as_str().unwrap().to_owned(),
                            amount(&a["amount"]),
                        )
                    })
                    .collect()
            };
            let from_mcp = listed(&activity["investment_transactions"], &|a| {
                a.as_str().unwrap().to_owned()
            });
            assert!(!from_mcp.is_empty(), "the sandbox brokerage has activity");
            assert_eq!(
                from_mcp,
                listed(&rest_activity["investmentTransactions"], &digits)
            );
            assert_eq!(activity["total"], rest_activity["total"]);

            // spending_summary: GET /spending's groups, sums exact.
            for group_by in ["category", "merchant", "month"] {
                let mcp = inspector
                    .answer(
                        &url,
                        key,
                        "spending_summary",
                        &json!({"group_by": group_by, "from": "2026-06-01"}),
                    )
                    .await;
                let rest_groups = rest(
                    &server,
                    key,
                    &format!("/spending?group_by={group_by}&from=2026-06-01"),
                )
                .await;
                let rest_groups = rest_groups["groups"].as_array().unwrap();
                let mcp_groups = mcp["groups"].as_array().unwrap();
                assert!(!mcp_groups.is_empty());
                assert_eq!(mcp_groups.len(), rest_groups.len().min(100), "{group_by}");
                for (m, r) in mcp_groups.iter().zip(rest_groups) {
                    assert_eq!(
                        (&m["key"], &m["currency"], &m["transactions"]),
                        (&r["key"], &r["currency"], &r["transactions"])
                    );
                    assert_eq!(m["spent"], digits(&r["spent"]), "{group_by} {m}");
                }
            }

            // list_recurring: GET /recurring's streams.
            let mcp = inspector
                .answer(&url, key, "list_recurring", &json!({}))
                .await;
            let rest_streams = rest(&server, key, "/recurring").await;
            for direction in ["inflow", "outflow"] {
                let stream_ids = |v: &Value| -> Vec<String> {
                    v[direction]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| s["id"].as_str().unwrap().to_owned())
                        .collect()
                };
                assert_eq!(stream_ids(&mcp), stream_ids(&rest_streams), "{direction}");
            }
            assert!(!mcp["outflow"].as_array().unwrap().is_empty());

            // get_changes: the feed, page by page, holds what REST's holds.
            let mut mcp_added = BTreeSet::new();
            let mut arguments = json!({"count": 100});
            loop {
                let page = inspector.answer(&url, key, "get_changes", &arguments).await;
                for t in page["added"].as_array().unwrap() {
                    mcp_added.insert(t["id"].as_str().unwrap().to_owned());
                }
                arguments["cursor"] = page["next_cursor"].clone();
                if page["has_more"] == false {
                    break;
                }
            }
            let mut rest_added = BTreeSet::new();
            let mut path = "/transactions/sync?count=500".to_owned();
            loop {
                let page = rest(&server, key, &path).await;
                for t in page["added"].as_array().unwrap() {
                    rest_added.insert(t["id"].as_str().unwrap().to_owned());
                }
                if page["has_more"] == false {
                    break;
                }
                path = format!(
                    "/transactions/sync?count=500&cursor={}",
                    page["next_cursor"].as_str().unwrap()
                );
            }
            assert!(!mcp_added.is_empty());
            assert_eq!(mcp_added, rest_added);

            // A question the data cannot answer is a tool error the model
            // reads; the inspector exits 5 and prints the result.
            let refused = inspector
                .call(
                    &url,
                    key,
                    "get_transactions",
                    &json!({"account_id": world.bob_account.get()}),
                )
                .await;
            assert_eq!(refused.exit, 5, "{refused:?}");
            assert_eq!(refused.result["isError"], true);
            assert!(
                refused.result["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .starts_with("ACCOUNT_NOT_FOUND")
            );

            // Without a valid credential the inspector is told to authorize.
            let revoked = inspector.list_tools(&url, &world.alice_revoked_key).await;
            assert_eq!(revoked.exit, 3, "{revoked:?}");
            server
        }
    })
    .await;
}

#[actix_web::test]
async fn a_key_scoped_to_two_accounts_never_sees_a_third() {
    let inspector = inspector();
    on_every_backend(|server: TestServer| {
        let inspector = inspector.clone();
        async move {
            let world = &server.world;
            let (checking, savings) = (
                world.alice_sandbox_accounts[0],
                world.alice_sandbox_accounts[1],
            );
            let key = {
                let conn = &mut *server.database.db().conn().unwrap();
                tributary_auth::api_keys::issue(
                    conn,
                    world.alice_user,
                    "two accounts",
                    Some(&[checking, savings]),
                    server.clock.now(),
                )
                .unwrap()
                .plain_text
            };
            let key = key.as_str();
            let url = server.url("/mcp");
            let seen: BTreeSet<i64> = [checking.get(), savings.get()].into();
            let accounts = inspector
                .answer(&url, key, "list_accounts", &json!({}))
                .await;
            let listed: BTreeSet<i64> = accounts["accounts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["id"].as_i64().unwrap())
                .collect();
            assert_eq!(listed, seen);

            tributary_e2e::mcp::assert_sees_only(
                &server,
                key,
                &seen,
                &[
                    world.alice_brokerage.get(),
                    world.alice_imported.get(),
                    world.bob_account.get(),
                    999_999,
                ],
            )
            .await;
            // The feed's cursor of the whole key does not open another view.
            let full = call(
                &server,
                &world.alice_key,
                "get_changes",
                json!({"count": 1}),
            )
            .await;
            let cursor = full["result"]["structuredContent"]["next_cursor"].clone();
            let answer = call(&server, key, "get_changes", json!({"cursor": cursor})).await;
            assert_eq!(answer["result"]["isError"], true, "{answer}");
            server
        }
    })
    .await;
}

#[actix_web::test]
async fn malformed_messages_unknown_tools_and_oversized_arguments_are_protocol_errors() {
    on_every_backend(|server: TestServer| async move {
        let key = server.world.alice_key.clone();
        let key = key.as_str();
        // Not JSON: JSON-RPC's parse error, 400.
        for body in ["{\"jsonrpc\":\"2.0\",\"id\":1,", "[", "", "\u{fe}"] {
            let (status, answer) = rpc(&server, key, body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body:?}: {answer}");
            assert_eq!(answer["error"]["code"], -32700, "{body:?}");
        }
        // JSON, but not a message the protocol knows: a 4xx or a JSON-RPC
        // error, never a 5xx.
        for body in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "nope/nothing"}),
            json!({"jsonrpc": "2.0", "id": 1}),
            json!({"hello": "world"}),
            json!(42),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "list_accounts"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}),
        ] {
            let (status, answer) = rpc(&server, key, &body.to_string()).await;
            assert!(!status.is_server_error(), "{body}: {status} {answer}");
            assert!(
                status.is_client_error() || answer["error"]["code"].is_i64(),
                "{body}: {status} {answer}"
            );
        }
        // An unknown tool, wrong types, unknown fields, oversized values:
        // -32602 naming what is wrong.
        for (tool, arguments, names) in [
            ("transfer_money", json!({}), "transfer_money"),
            ("get_transactions", json!({"limit": "ten"}), "limit"),
            ("get_transactions", json!({"limit": 101}), "limit"),
            ("get_transactions", json!({"account_id": 0}), "account_id"),
            ("get_transactions", json!({"text": "x".repeat(201)}), "text"),
            ("get_transactions", json!({"colour": "red"}), "colour"),
            ("get_changes", json!({"count": 1000}), "count"),
            (
                "get_balance_history",
                json!({"interval": "hourly"}),
                "hourly",
            ),
        ] {
            let answer = call(&server, key, tool, arguments.clone()).await;
            assert_eq!(
                answer["error"]["code"], -32602,
                "{tool} {arguments}: {answer}"
            );
            assert!(
                answer["error"]["message"].as_str().unwrap().contains(names),
                "{answer}"
            );
        }
        // A body beyond the bound is refused before it is read whole.
        let (status, _) = rpc(
            &server,
            key,
            &format!("{{\"pad\":\"{}\"}}", "x".repeat(70_000)),
        )
        .await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        // A bad date is a tool error naming it, for the model to correct.
        let answer = call(
            &server,
            key,
            "get_transactions",
            json!({"from": "2026-13-01"}),
        )
        .await;
        assert_eq!(answer["result"]["isError"], true);
        assert!(
            answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("`from`")
        );
        server
    })
    .await;
}

#[actix_web::test]
async fn without_a_valid_credential_the_answer_is_401() {
    on_every_backend(|server: TestServer| async move {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
        for key in ["", "trb_not-a-key", server.world.alice_revoked_key.as_str()] {
            let (status, answer) = rpc(&server, key, &body).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{key}: {answer}");
        }
        server
    })
    .await;
}

#[actix_web::test]
async fn each_credential_has_its_request_limit() {
    for database in TestDatabase::all() {
        let server = tributary_e2e::start_configured(database, Vec::new(), |config| {
            config.mcp_requests_per_minute = 3;
        });
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "list_accounts", "arguments": {}},
        })
        .to_string();
        for _ in 0..3 {
            let (status, _) = rpc(&server, &server.world.alice_key, &body).await;
            assert_eq!(status, StatusCode::OK);
            // The handshake and the tool list read nothing: not counted.
            let (status, _) = rpc(&server, &server.world.alice_key, &list).await;
            assert_eq!(status, StatusCode::OK);
        }
        let response = Client::new()
            .post(server.url("/mcp"))
            .bearer_auth(&server.world.alice_key)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()["retry-after"], "60");
        let answer: Value = response.json().await.unwrap();
        assert_eq!(answer["code"], "MCP_RATE_LIMITED");
        assert!(
            answer["message"]
                .as_str()
                .unwrap()
                .contains("3 MCP tool calls")
        );
        // Another key is counted apart; a minute later the first may again.
        let (status, _) = rpc(&server, &server.world.bob_key, &body).await;
        assert_eq!(status, StatusCode::OK);
        server.clock.advance(chrono::Duration::seconds(60));
        let (status, _) = rpc(&server, &server.world.alice_key, &body).await;
        assert_eq!(status, StatusCode::OK);
        server.stop().await;
    }
}
