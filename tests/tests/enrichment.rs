//! Enrichment over HTTP, on both backends: the sandbox's transfers between
//! a person's own accounts are paired and left out of `GET /spending`,
//! whose totals agree with the transactions listed one by one
//! (docs/enrichment.md).

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use reqwest::{Client, StatusCode};
use serde_json::Value;
use std::collections::BTreeMap;
use tributary_domain::Decimal;
use tributary_domain::clock::Clock as _;
use tributary_domain::money::parse_decimal;
use tributary_e2e::TestServer;
use tributary_e2e::harness::personal as on_every_backend;

async fn get(server: &TestServer, path: &str, key: &str) -> (StatusCode, Value) {
    let response = Client::new()
        .get(server.url(path))
        .header("x-api-key", key)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

fn decimal(value: &Value) -> Decimal {
    parse_decimal(&value.to_string()).unwrap()
}

#[actix_web::test]
async fn transfers_pair_and_spending_leaves_them_out() {
    on_every_backend(|server| async move {
        let key = server.world.alice_key.clone();
        let mut rows = Vec::new();
        let (_, accounts) = get(&server, "/api/v1/accounts", &key).await;
        let accounts: Vec<i64> = accounts["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_i64().unwrap())
            .collect();
        for account in &accounts {
            let (status, page) = get(
                &server,
                &format!("/api/v1/accounts/{account}/transactions"),
                &key,
            )
            .await;
            assert_eq!(status, StatusCode::OK);
            rows.extend(page["transactions"].as_array().unwrap().iter().cloned());
        }
        // The checking account's transfers to savings are paired with their
        // arrivals: both sides Transfer, each naming the other's account.
        let transfers: Vec<&Value> = rows
            .iter()
            .filter(|t| t["description"] == "Transfer to High-Yield Savings")
            .collect();
        assert!(!transfers.is_empty());
        for t in &transfers {
            assert_eq!(t["category"], "Transfer", "{t}");
            assert_eq!(t["subcategory"], "transfer.own_accounts", "{t}");
            let other = t["transferAccountId"].as_i64().unwrap();
            assert_ne!(other, t["accountId"].as_i64().unwrap());
            let arrival = rows
                .iter()
                .find(|r| {
                    r["accountId"] == other
                        && decimal(&r["amount"]) == -decimal(&t["amount"])
                        && r["transferAccountId"] == t["accountId"]
                })
                .unwrap_or_else(|| panic!("no arrival of {t}"));
            assert_eq!(arrival["subcategory"], "transfer.own_accounts");
        }
        // Against the generator's truth (the descriptions it writes on both
        // sides of a move between one's own accounts): every pair found is
        // one, and every one is found.
        const OWN_TRANSFERS: [&str; 7] = [
            "Transfer to High-Yield Savings",
            "Transfer to Holiday Fund",
            "Transfer to Brokerage",
            "Transfer from Everyday Checking",
            "Credit card autopay",
            "Payment received - thank you",
            "Contribution",
        ];
        let truth = |t: &Value| {
            t["isPending"] == false
                && OWN_TRANSFERS.iter().any(|d| t["description"] == *d)
        };
        let found = rows.iter().filter(|t| !t["transferAccountId"].is_null()).count();
        let true_found = rows
            .iter()
            .filter(|t| !t["transferAccountId"].is_null() && truth(t))
            .count();
        let all_true = rows.iter().filter(|t| truth(t)).count();
        eprintln!(
            "transfer sides: {found} paired, {true_found} of them true; {all_true} in the generator's truth"
        );
        assert!(all_true > 0);
        assert_eq!(true_found, found, "precision: a side paired that is no own transfer");
        assert_eq!(true_found, all_true, "recall: an own transfer left unpaired");

        // A key that may read only the paying account learns nothing of
        // the other: the page, the whole list and the change feed leave
        // the partner out.
        let paying = transfers[0]["accountId"].as_i64().unwrap();
        let scoped = {
            let conn = &mut *server.database.db().conn().unwrap();
            tributary_auth::api_keys::issue(
                conn,
                server.world.alice_user,
                "paying account only",
                Some(&[tributary_domain::ids::AccountId::new(paying)]),
                server.clock.now(),
            )
            .unwrap()
            .plain_text
        };
        let path = format!("/api/v1/accounts/{paying}/transactions");
        let (_, listed) = get(&server, &path, &scoped).await;
        let (_, paged) = get(&server, &format!("{path}?limit=1000"), &scoped).await;
        let mut fed = Vec::new();
        let mut path_from = "/api/v1/transactions/sync?count=500".to_owned();
        loop {
            let (_, page) = get(&server, &path_from, &scoped).await;
            fed.extend(page["added"].as_array().unwrap().iter().cloned());
            let cursor = page["next_cursor"].as_str().unwrap();
            path_from = format!("/api/v1/transactions/sync?count=500&cursor={cursor}");
            if page["has_more"] != true {
                break;
            }
        }
        let fed = Value::Array(fed);
        for answer in [&listed["transactions"], &paged["transactions"], &fed] {
            let seen: Vec<&Value> = answer
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| t["description"] == "Transfer to High-Yield Savings")
                .collect();
            assert_eq!(seen.len(), transfers.len(), "{answer}");
            for t in seen {
                assert_eq!(t["transferAccountId"], Value::Null, "{t}");
                assert_eq!(t["category"], "Transfer", "{t}");
            }
        }

        // Paying the card off is a card payment on both sides.
        let autopay = rows
            .iter()
            .find(|t| t["description"] == "Credit card autopay")
            .unwrap();
        assert_eq!(autopay["subcategory"], "transfer.credit_card_payment");

        // The totals, from the rows one by one: posted, not income, not a
        // transfer between own accounts or to the card; refunds net.
        let mut expected: BTreeMap<(String, String), Decimal> = BTreeMap::new();
        for t in &rows {
            let subcategory = t["subcategory"].as_str().unwrap();
            if t["category"] == "Income"
                || subcategory == "transfer.own_accounts"
                || subcategory == "transfer.credit_card_payment"
            {
                continue;
            }
            let group = (
                t["currency"].as_str().unwrap().to_owned(),
                t["category"].as_str().unwrap().to_owned(),
            );
            *expected.entry(group).or_default() -= decimal(&t["amount"]);
        }
        let (status, spending) = get(&server, "/api/v1/spending", &key).await;
        assert_eq!(status, StatusCode::OK, "{spending}");
        let got: BTreeMap<(String, String), Decimal> = spending["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                let group = (
                    g["currency"].as_str().unwrap().to_owned(),
                    g["key"].as_str().unwrap().to_owned(),
                );
                (group, decimal(&g["spent"]))
            })
            .collect();
        let expected: BTreeMap<(String, String), Decimal> = expected
            .into_iter()
            .map(|(k, v)| (k, v.normalize()))
            .collect();
        assert_eq!(got, expected);
        assert!(got.keys().all(|(_, category)| category != "Income"));

        // By month, the same money.
        let (_, by_month) = get(&server, "/api/v1/spending?group_by=month", &key).await;
        let months: Decimal = by_month["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| decimal(&g["spent"]))
            .sum();
        assert_eq!(months, got.values().copied().sum::<Decimal>());

        // What cannot be asked names why.
        let (status, body) = get(&server, "/api/v1/spending?group_by=week", &key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["code"], "INVALID_PARAMETER");
        let (status, body) = get(
            &server,
            &format!("/api/v1/spending?account_id={}", server.world.bob_account),
            &key,
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "another's account: {body}");
        server
    })
    .await;
}

/// The sandbox's schedule (crates/providers/src/sandbox/generator.rs): what
/// recurs, by account name, merchant as it reads cleaned, frequency and
/// direction. Everything else it makes (coffee, groceries, restaurants,
/// rides, Amazon, cash) happens on no schedule.
const SANDBOX_STREAMS: [(&str, &str, &str, bool); 16] = [
    (
        "Everyday Checking",
        "Greenview Property Management",
        "MONTHLY",
        false,
    ),
    ("Everyday Checking", "Acme", "SEMI_MONTHLY", true),
    ("Everyday Checking", "High-Yield Savings", "MONTHLY", false),
    ("Everyday Checking", "Holiday Fund", "MONTHLY", false),
    ("Everyday Checking", "Rewards Visa", "MONTHLY", false),
    ("Everyday Checking", "Brokerage", "MONTHLY", false),
    ("Everyday Checking", "City Power & Light", "MONTHLY", false),
    ("Everyday Checking", "Verizon", "MONTHLY", false),
    ("High-Yield Savings", "Everyday Checking", "MONTHLY", true),
    ("High-Yield Savings", "Interest payment", "MONTHLY", true),
    ("Holiday Fund", "Everyday Checking", "MONTHLY", true),
    ("Rewards Visa", "Netflix", "MONTHLY", false),
    ("Rewards Visa", "Spotify", "MONTHLY", false),
    ("Rewards Visa", "Received - Thank You", "MONTHLY", true),
    ("Individual Brokerage", "Contribution", "MONTHLY", true),
    (
        "Individual Brokerage",
        "Dividend reinvestment cash",
        "QUARTERLY",
        true,
    ),
];

#[actix_web::test]
async fn every_sandbox_stream_is_found_and_no_other() {
    on_every_backend(|server| async move {
        let key = server.world.alice_key.clone();
        let (_, accounts) = get(&server, "/api/v1/accounts", &key).await;
        let names: BTreeMap<i64, String> = accounts["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["id"].as_i64().unwrap(),
                    a["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let mut transactions = 0;
        for id in names.keys() {
            let (_, page) = get(
                &server,
                &format!("/api/v1/accounts/{id}/transactions"),
                &key,
            )
            .await;
            transactions += page["total"].as_u64().unwrap();
        }
        let (status, body) = get(&server, "/api/v1/recurring", &key).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let mut found = std::collections::BTreeSet::new();
        for (inflow, list) in [(true, &body["inflow"]), (false, &body["outflow"])] {
            for s in list.as_array().unwrap() {
                assert_eq!(s["status"], "ACTIVE", "{s}");
                assert!(s["transactionIds"].as_array().unwrap().len() >= 3, "{s}");
                found.insert((
                    names[&s["accountId"].as_i64().unwrap()].clone(),
                    s["merchant"].as_str().unwrap().to_owned(),
                    s["frequency"].as_str().unwrap().to_owned(),
                    inflow,
                ));
            }
        }
        let expected: std::collections::BTreeSet<(String, String, String, bool)> = SANDBOX_STREAMS
            .iter()
            .filter(|(account, ..)| names.values().any(|n| n == account))
            .map(|(a, m, f, i)| (a.to_string(), m.to_string(), f.to_string(), *i))
            .collect();
        let missed: Vec<_> = expected.difference(&found).collect();
        let extra: Vec<_> = found.difference(&expected).collect();
        eprintln!(
            "{} streams expected, {} found; {transactions} transactions, {} false",
            expected.len(),
            found.len(),
            extra.len()
        );
        assert!(missed.is_empty(), "not found: {missed:?}");
        // At most one false stream per 1,000 transactions.
        assert!(
            (extra.len() as u64) * 1000 <= transactions.max(1000),
            "false streams: {extra:?}"
        );
        server
    })
    .await;
}

async fn send(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = Client::new()
        .request(method, server.url(path))
        .header("x-api-key", key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Every change of the feed past `cursor`, and the cursor where it ends.
async fn feed_from(
    server: &TestServer,
    key: &str,
    cursor: &str,
) -> (Vec<Value>, Vec<Value>, String) {
    let (mut added, mut modified, mut cursor) = (Vec::new(), Vec::new(), cursor.to_owned());
    loop {
        let path = if cursor.is_empty() {
            "/api/v1/transactions/sync?count=500".to_owned()
        } else {
            format!("/api/v1/transactions/sync?count=500&cursor={cursor}")
        };
        let (status, page) = get(server, &path, key).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        added.extend(page["added"].as_array().unwrap().iter().cloned());
        modified.extend(page["modified"].as_array().unwrap().iter().cloned());
        cursor = page["next_cursor"].as_str().unwrap().to_owned();
        if page["has_more"] != true {
            return (added, modified, cursor);
        }
    }
}

#[actix_web::test]
async fn a_rule_over_http_reaches_history_once_and_names_what_is_wrong() {
    on_every_backend(|server| async move {
        let key = server.world.alice_key.clone();
        let (history, _, cursor) = feed_from(&server, &key, "").await;
        // The merchant of some purchase that is no transfer.
        let merchant = history
            .iter()
            .filter(|t| t["category"] != "Transfer" && t["category"] != "Income")
            .find_map(|t| t["merchant"].as_str())
            .unwrap()
            .to_owned();
        let matching: Vec<String> = history
            .iter()
            .filter(|t| t["merchant"] == merchant.as_str())
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect();

        let rule = serde_json::json!({
            "match": {"merchant": merchant.to_uppercase()},
            "set": {"merchant": "Renamed by a rule", "subcategory": "entertainment.hobbies"}
        });
        let (status, kept) = send(
            &server,
            reqwest::Method::POST,
            "/api/v1/rules",
            &key,
            Some(rule.clone()),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{kept}");
        assert_eq!(kept["set"]["category"], "Entertainment");
        assert_eq!(kept["match"]["merchant"], merchant.to_uppercase());

        tributary_e2e::enrich_again(server.database.db(), server.clock.clone());
        let (_, listed) = get(&server, "/api/v1/rules", &key).await;
        assert_eq!(listed["rules"].as_array().unwrap().len(), 1);
        let applying = &listed["applying"];
        assert!(applying["finishedAt"].is_string(), "{listed}");
        assert_eq!(applying["changed"], matching.len());
        assert_eq!(applying["checked"], applying["total"]);

        // The feed: each matching row modified once, nothing else.
        let (added, modified, cursor) = feed_from(&server, &key, &cursor).await;
        assert!(added.is_empty());
        let mut ids: Vec<String> = modified
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        let mut expected = matching.clone();
        expected.sort();
        assert_eq!(ids, expected);
        for t in &modified {
            assert_eq!(t["merchant"], "Renamed by a rule", "{t}");
            assert_eq!(t["category"], "Entertainment", "{t}");
            assert_eq!(t["subcategory"], "entertainment.hobbies", "{t}");
        }
        // Applying it again changes nothing.
        let id = kept["id"].as_str().unwrap();
        let (status, _) = send(
            &server,
            reqwest::Method::PUT,
            &format!("/api/v1/rules/{id}"),
            &key,
            Some(kept.clone()),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        tributary_e2e::enrich_again(server.database.db(), server.clock.clone());
        let (added, modified, cursor) = feed_from(&server, &key, &cursor).await;
        assert!(added.is_empty() && modified.is_empty());

        // What cannot be kept says which field and why.
        let bad = serde_json::json!({"match": {"amountMin": "ten"}, "set": {"merchant": "x"}});
        let (status, body) = send(
            &server,
            reqwest::Method::POST,
            "/api/v1/rules",
            &key,
            Some(bad),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["code"], "INVALID_RULE");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("match.amountMin"),
            "{body}"
        );
        let others = serde_json::json!({
            "match": {"accountId": server.world.bob_account.get()},
            "set": {"merchant": "x"}
        });
        let (status, body) = send(
            &server,
            reqwest::Method::POST,
            "/api/v1/rules",
            &key,
            Some(others),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("match.accountId")
        );
        // A key limited to some accounts may not see or write rules; nor
        // may one person reach another's.
        let scoped = server.world.alice_scoped_key.clone();
        let (status, body) = get(&server, "/api/v1/rules", &scoped).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(body["code"], "KEY_RESTRICTED");
        let bob = server.world.bob_key.clone();
        let (status, _) = send(
            &server,
            reqwest::Method::DELETE,
            &format!("/api/v1/rules/{id}"),
            &bob,
            None,
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND);

        // Deleted: the rows go back to what the tables say, announced.
        let (status, _) = send(
            &server,
            reqwest::Method::DELETE,
            &format!("/api/v1/rules/{id}"),
            &key,
            None,
        )
        .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        tributary_e2e::enrich_again(server.database.db(), server.clock.clone());
        let (_, modified, _) = feed_from(&server, &key, &cursor).await;
        assert_eq!(modified.len(), matching.len());
        assert!(modified.iter().all(|t| t["merchant"] == merchant.as_str()));
        server
    })
    .await;
}
